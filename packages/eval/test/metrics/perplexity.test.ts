import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { perplexity } from '../../src/metrics/index';

describe('perplexity', () => {
  it('is exp(mean NLL)', () => {
    // Four tokens each predicted with probability 1/8: PPL = 8.
    expect(perplexity(4 * Math.log(8), 4)).toBeCloseTo(8, 12);
    // A uniform model over a vocabulary of 50 has PPL 50 whatever the length.
    expect(perplexity(1000 * Math.log(50), 1000)).toBeCloseTo(50, 10);
    expect(perplexity(0, 3)).toBe(1);
  });

  it('equals the inverse geometric mean of the token probabilities', () => {
    const probabilities = [0.5, 0.25, 0.8, 0.1, 0.9];
    const nll = probabilities.reduce((sum, p) => sum - Math.log(p), 0);
    const geometric = probabilities.reduce((product, p) => product * p, 1) ** (1 / 5);
    expect(perplexity(nll, probabilities.length)).toBeCloseTo(1 / geometric, 12);
  });

  it('rejects NaN, negative NLL and non-positive or fractional token counts', () => {
    expectLetheError(() => perplexity(Number.NaN, 3), 'E_ARG', 'sumNll');
    expectLetheError(() => perplexity(-0.1, 3), 'E_ARG', 'sumNll');
    expectLetheError(() => perplexity(1, 0), 'E_ARG', 'tokens');
    expectLetheError(() => perplexity(1, 2.5), 'E_ARG', 'tokens');
    expectLetheError(() => perplexity(1, Number.NaN), 'E_ARG', 'tokens');
  });
});
