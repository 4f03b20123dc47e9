import { describe, expect, it } from 'vitest';
import { AGE_FEATURES, writeAgeEmbedding } from '../../src/features/age-embedding';

describe('age embedding', () => {
  it('is sin then cos of age·50000^(−i/4), i = 0 … 3', () => {
    const out = new Float32Array(10);
    for (const age of [0, 1, 7, 511, 40_000]) {
      writeAgeEmbedding(age, out, 2);
      for (let i = 0; i < 4; i++) {
        const angle = age / 50_000 ** (i / 4);
        expect(out[2 + i]).toBeCloseTo(Math.sin(angle), 6);
        expect(out[6 + i]).toBeCloseTo(Math.cos(angle), 6);
      }
    }
    expect(AGE_FEATURES).toBe(8);
  });
});
