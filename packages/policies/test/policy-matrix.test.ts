import { FULL_CACHE } from '@lethe/kv-cache';
import {
  accepts,
  MATRIX_MODES,
  type ProviderKind,
  policyMatrixCases,
  providerKind,
} from '@lethe/model/testing';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDERS } from '../src/default-registry';
import { MATRIX_FIXTURES } from './matrix-fixtures';

// The shared policy matrix (`@lethe/model/testing`) over the default registry. The heuristics run
// here (their package is below the model, which tests its runtime with them); every learned
// provider runs the matrix in its own package, on the fixture it exports.
beforeAll(() => initBackend('cpu'));

const evaluated = DEFAULT_PROVIDERS.filter((p) => p.name !== FULL_CACHE);

/** The mode of a provider's defaults, by what it builds. */
const DEFAULT_MODE: Record<ProviderKind, string> = {
  eviction: 'defaults',
  compute: 'compute-defaults',
  read: 'read-defaults',
};

describe('the default registry in the policy matrix', () => {
  it('has a fixture for every learned provider, and every provider takes its default mode', () => {
    expect(evaluated.filter((p) => providerKind(p) === 'read').map((p) => p.name)).toEqual([
      'quest',
    ]);
    for (const provider of evaluated) {
      if (provider.learned !== undefined) expect(MATRIX_FIXTURES[provider.name]).toBeDefined();
      const defaults = MATRIX_MODES.find((m) => m.name === DEFAULT_MODE[providerKind(provider)])!;
      expect(accepts(provider, defaults)).toBe(true);
    }
  });
});

const cases = evaluated
  .filter((provider) => provider.learned === undefined)
  .flatMap((provider) => policyMatrixCases(provider));
it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => c.run());
