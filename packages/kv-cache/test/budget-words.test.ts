import { describe, expect, it } from 'vitest';
import { describeBudget } from '../src/index';

describe('describeBudget', () => {
  it('says what each budget form allows', () => {
    expect(describeBudget({ capacity: 64 })).toBe('64 entries per KV head');
    expect(describeBudget({ readTokens: 9 })).toBe('reads 9 entries per KV head and step');
    expect(describeBudget({ targets: { tokenKeep: 0.5, mlpInputKeep: 1, precision: 0.25 } })).toBe(
      'compute targets tokenKeep 0.5, mlpInputKeep 1, precision 0.25',
    );
    expect(describeBudget({ keepRatio: 0.5, every: 16 })).toBe('keeps 0.5 every 16 tokens');
  });
});
