import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  blockWindowPairs,
  integer,
  labels,
  labelsOrNone,
  positiveInteger,
  rate,
  rates,
} from '../src/cli-args';

describe('flag parsers', () => {
  it('accept what they promise and reject the rest with commander errors', () => {
    expect(integer('-3')).toBe(-3);
    expect(labels('sft,no-evict')).toEqual(['sft', 'no-evict']);
    expect(labelsOrNone('none')).toEqual([]);
    expect(labelsOrNone('sft')).toEqual(['sft']);
    expect(positiveInteger('12')).toBe(12);
    expect(rates('0.1,0.5,1')).toEqual([0.1, 0.5, 1]);
    expect(blockWindowPairs('2:5,4:1')).toEqual([
      { blockSize: 2, window: 5 },
      { blockSize: 4, window: 1 },
    ]);
    for (const bad of [
      () => integer(''),
      () => integer('1.5'),
      () => positiveInteger('0'),
      () => rate('0'),
      () => rate('1.01'),
      () => rate('NaN'),
      () => rates('0.2,,0.5'),
      () => blockWindowPairs('2'),
      () => blockWindowPairs('2:0'),
      () => blockWindowPairs('2:5:1'),
    ]) {
      expect(bad).toThrow(InvalidArgumentError);
    }
  });
});
