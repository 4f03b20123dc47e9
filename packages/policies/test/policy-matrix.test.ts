import { FULL_CACHE } from '@lethe/kv-cache';
import { accepts, isComputeProvider, MATRIX_MODES, policyMatrixCases } from '@lethe/model/testing';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDERS } from '../src/default-registry';
import { MATRIX_FIXTURES } from './matrix-fixtures';

// The shared policy matrix (`@lethe/model/testing`) over the default registry. The heuristics run
// here (their package is below the model, which tests its runtime with them); every learned
// provider runs the matrix in its own package, on the fixture it exports.
beforeAll(() => initBackend('cpu'));

const evaluated = DEFAULT_PROVIDERS.filter((p) => p.name !== FULL_CACHE);

describe('the default registry in the policy matrix', () => {
  it('has a fixture for every learned provider, and every provider takes its default mode', () => {
    for (const provider of evaluated) {
      if (provider.learned !== undefined) expect(MATRIX_FIXTURES[provider.name]).toBeDefined();
      const defaults = isComputeProvider(provider) ? 'compute-defaults' : 'defaults';
      expect(accepts(provider, MATRIX_MODES.find((m) => m.name === defaults)!)).toBe(true);
    }
  });
});

const cases = evaluated
  .filter((provider) => provider.learned === undefined)
  .flatMap((provider) => policyMatrixCases(provider));
it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => c.run());
