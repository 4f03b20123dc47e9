import { LetheError } from '@lethe/core';
import { composePolicies, type PolicyBudget, type PreparedPolicy } from '@lethe/kv-cache';
import {
  type ComposedMatrixPart,
  composedMatrixCases,
  kvCacheLoopContext,
  MATRIX_MODES,
  type MatrixMode,
} from '@lethe/model/testing';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDefaultRegistry, DEFAULT_PROVIDERS } from '../src/default-registry';
import { MATRIX_FIXTURES } from './matrix-fixtures';

// The composed policy matrix (`@lethe/model/testing`, kvpress's ComposedPress tests) over the
// default registry: an eviction policy or a read selector with a SOL compute policy (without
// its KV refresh), an eviction policy with a read selector, and the learned SOL and NAMM in
// compositions (their packages do not depend on the heuristics or on each other, so their
// compositions run here, on the fixtures they export).
beforeAll(() => initBackend('cpu'));

/** The part of the default provider `name` (its fixture when it is learned), in `modes`. */
function part(name: string, modes?: readonly MatrixMode[]): ComposedMatrixPart {
  const provider = DEFAULT_PROVIDERS.find((p) => p.name === name)!;
  return { provider, fixture: MATRIX_FIXTURES[name], ...(modes === undefined ? {} : { modes }) };
}

// H2O in every mode it takes, Quest in both read modes; the others in their kind's default.
const compositions = [
  [part('h2o', MATRIX_MODES), part('sol-fixed')],
  [part('snapkv'), part('sol-random')],
  [part('quest', MATRIX_MODES), part('sol-fixed')],
  [part('knorm'), part('quest')],
  [part('sol'), part('h2o')],
  [part('namm'), part('sol-fixed')],
];

const cases = compositions.flatMap((parts) => composedMatrixCases(parts));
it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => c.run());

describe('compositions the runtime cannot run', () => {
  const registry = createDefaultRegistry();

  /** The error building the composition of `names` under `budgets` throws. */
  async function refusal(names: string[], budgets: PolicyBudget[]): Promise<unknown> {
    const parts: PreparedPolicy[] = [];
    for (const name of names) parts.push(await registry.prepare(name));
    try {
      composePolicies(parts).build(budgets, kvCacheLoopContext(2));
    } catch (error) {
      return error;
    } finally {
      for (const p of parts) p.release();
    }
    throw new Error(`${names.join('+')} was built`);
  }

  const targets = { targets: { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 } };

  it('refuses two eviction policies: both fill the eviction slot', async () => {
    const error = await refusal(['h2o', 'snapkv'], [{ capacity: 8 }, { capacity: 8 }]);
    expect(error).toBeInstanceOf(LetheError);
    expect(error).toMatchObject({ code: 'E_ARG', argument: 'sets[1]' });
    expect((error as Error).message).toMatch(/snapkv and h2o both fill the eviction slot/);
  });

  it('refuses a refreshing compute policy beside an eviction policy or a read selector', async () => {
    for (const [other, budget] of [
      ['h2o', { capacity: 8 }],
      ['quest', { readTokens: 6 }],
    ] as const) {
      const error = await refusal([other, 'sol-fixed'], [budget, targets]);
      expect(error).toBeInstanceOf(LetheError);
      expect(error).toMatchObject({ code: 'E_ARG', argument: 'sets[1].compute.refreshEvery' });
      expect((error as Error).message).toMatch(/option refresh false/);
    }
  });
});
