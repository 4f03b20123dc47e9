import { philox4x32 } from '@lethe/core';
import { describe, expect, it } from 'vitest';
import { PhiloxWords } from '../src/philox-words';

/** Core's words of blocks first … first + count − 1, in order. */
function coreWords(k0: number, k1: number, first: number, count: number): number[] {
  const block = new Uint32Array(4);
  const out: number[] = [];
  for (let c = first; c < first + count; c++) {
    philox4x32(c >>> 0, Math.floor(c / 2 ** 32), 0, 0, k0, k1, block);
    out.push(...block);
  }
  return out;
}

function draw(words: PhiloxWords, count: number): number[] {
  return Array.from({ length: count }, () => words.next() >>> 0);
}

describe('PhiloxWords: core Philox4x32-10 words in bulk', () => {
  it.each([
    [0, 0, 0],
    [0xffffffff, 0xffffffff, 123_456],
    [0x9e3779b9, 7, 2 ** 32 - 300], // the counter's low word wraps inside a refill
    [1, 0x80000000, 2 ** 52 + 5],
  ])('key (%i, %i) from block %i: the words of core philox4x32', (k0, k1, first) => {
    const words = new PhiloxWords(k0, k1, first);
    words.expect(4 * 600);
    expect(draw(words, 4 * 600)).toEqual(coreWords(k0, k1, first, 600));
  });

  it('gives the same words and counter for any expect() up to the words read; flush resumes at the next block', () => {
    const reference = coreWords(5, 6, 10, 40);
    for (const hint of [0, 1, 7, 148, 150]) {
      const words = new PhiloxWords(5, 6, 10);
      words.expect(hint);
      expect(draw(words, 150)).toEqual(reference.slice(0, 150));
      // 150 words end inside block 10 + 37; a flush drops its last two words.
      words.flush();
      expect(words.counter).toBe(10 + 38);
      expect(draw(words, 8)).toEqual(reference.slice(152, 160));
    }
  });

  it('lets a reader take words straight from the buffer', () => {
    const words = new PhiloxWords(9, 9, 0);
    words.expect(12);
    words.refill();
    expect(words.position).toBe(0);
    expect(words.end).toBe(12);
    expect(Array.from(words.buffer.subarray(0, 12), (w) => w >>> 0)).toEqual(coreWords(9, 9, 0, 3));
    words.position = 12;
    expect(words.next() >>> 0).toBe(coreWords(9, 9, 3, 1)[0]);
  });
});
