import {
  type AnyPolicyProvider,
  type ComputePolicy,
  fullCacheProvider,
  type ReadSelector,
} from '@lethe/kv-cache';
import { h2oProvider, questProvider, streamingLlmProvider } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  composedMatrixCases,
  MATRIX_MODES,
  type MatrixMode,
  PolicyMatrixFailure,
  runComposedMatrix,
} from '../../src/testing/index';

// The composed matrix proves itself: a sound composition passes, and a part that breaks its own
// promise — or does nothing — fails the case, with the check named.
beforeAll(() => initBackend('cpu'));

/** A compute mode whose options every provider takes (the test providers have none). */
const COMPUTE: MatrixMode = {
  ...MATRIX_MODES.find((mode) => mode.name === 'compute-defaults')!,
  name: 'compute-plain',
};

/** A compute provider whose policy returns `controls(layers)` at every step. */
function computeProvider(
  name: string,
  controls: () => ReturnType<ComputePolicy['controls']>,
): AnyPolicyProvider {
  return {
    ...fullCacheProvider,
    name,
    budgetForms: ['compute'],
    build: () => ({ compute: { name, controls } }),
  };
}

/** Quest's provider with a selector that reads every page of every head. */
const everyPage: AnyPolicyProvider = {
  ...questProvider,
  name: 'every-page',
  build(request) {
    const quest = questProvider.build(request as never).readSelector!;
    const readSelector: ReadSelector = {
      name: 'every-page',
      needs: quest.needs,
      pageSize: quest.pageSize,
      selectPages: (observation) =>
        Array.from(observation.liveCounts, (live) =>
          Int32Array.from({ length: Math.ceil(live / quest.pageSize) }, (_, p) => p),
        ),
    };
    return { readSelector };
  },
};

async function failureOf(parts: Parameters<typeof composedMatrixCases>[0]) {
  const [only] = composedMatrixCases(parts);
  const error = await only!.run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PolicyMatrixFailure);
  return error as PolicyMatrixFailure;
}

describe('composedMatrixCases', () => {
  it('passes an eviction policy with a read selector, one case per combination of modes', async () => {
    const modes = MATRIX_MODES.filter((mode) => ['per-head', 'block'].includes(mode.name));
    const cases = composedMatrixCases([
      { provider: h2oProvider, modes },
      { provider: questProvider },
    ]);
    expect(cases.map((c) => c.name)).toEqual([
      'h2o+quest × per-head+read-defaults × generate()',
      'h2o+quest × block+read-defaults × generate()',
    ]);
    expect(await runComposedMatrix([{ provider: h2oProvider }, { provider: questProvider }])).toBe(
      1,
    );
  });

  it('fails a selector that reads every page beside an eviction policy: within the read budget', async () => {
    const failure = await failureOf([{ provider: streamingLlmProvider }, { provider: everyPage }]);
    expect(failure.check).toBe('within the read budget');
  });

  it('fails a compute policy that asks for nothing: less than dense compute', async () => {
    const dense = computeProvider('dense', () => [undefined, undefined]);
    const failure = await failureOf([
      { provider: streamingLlmProvider },
      { provider: dense, modes: [COMPUTE] },
    ]);
    expect(failure.check).toBe('asks for less than dense compute somewhere');
  });

  it('fails a compute policy with controls for one layer of two: controls per layer', async () => {
    const short = computeProvider('short', () => [{ tokenKeep: 0.5 }]);
    const failure = await failureOf([
      { provider: streamingLlmProvider },
      { provider: short, modes: [COMPUTE] },
    ]);
    expect(failure.check).toBe('controls per layer');
  });

  it('refuses a learned part without a fixture, and a part in none of its modes', () => {
    const learned = { ...h2oProvider, name: 'learned', learned: { load: async () => undefined } };
    expect(() => composedMatrixCases([{ provider: learned }])).toThrow(/needs a fixture/);
    const modes = MATRIX_MODES.filter((mode) => mode.name === 'per-head');
    expect(() => composedMatrixCases([{ provider: questProvider, modes }])).toThrow(/accepts none/);
  });
});
