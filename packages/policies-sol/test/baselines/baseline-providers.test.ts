import { Rng } from '@lethe/core';
import { type ComputePolicy, type PolicyContext, PolicyRegistry } from '@lethe/kv-cache';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import type { AxisUsage } from '../../src/actions/action-set';
import {
  SOL_BASELINE_PROVIDERS,
  solDacProvider,
  solEmcProvider,
  solFixedProvider,
  solRandomProvider,
  solRandomSteeredProvider,
} from '../../src/baselines/baseline-providers';
import { DriftAwarePolicy } from '../../src/baselines/drift-aware';
import { EntropyMatchedPolicy } from '../../src/baselines/entropy-matched';
import { FixedSchedulePolicy } from '../../src/baselines/fixed-schedule';
import { RandomSchedulePolicy } from '../../src/baselines/random-schedule';
import { RandomSteeredPolicy } from '../../src/baselines/random-steered';
import { solProvider } from '../../src/policy/sol-provider';
import { randomObservation, usageOf } from './baseline-fixtures';

const registry = new PolicyRegistry([solProvider, ...SOL_BASELINE_PROVIDERS]);
const budget = { targets: { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 } };
const context = (sequences: number): PolicyContext => ({
  model: { layers: 2, kvHeads: 1, queryHeads: 2, headDim: 4, hiddenSize: 6, vocabSize: 10 },
  sequences,
});

const CASES = [
  { provider: solFixedProvider, policy: FixedSchedulePolicy, steered: false },
  { provider: solRandomProvider, policy: RandomSchedulePolicy, steered: false },
  { provider: solRandomSteeredProvider, policy: RandomSteeredPolicy, steered: true },
  { provider: solEmcProvider, policy: EntropyMatchedPolicy, steered: true },
  { provider: solDacProvider, policy: DriftAwarePolicy, steered: true },
] as const;

/**
 * The matrix's controls loop: the sequences run interleaved step by step, each with its own
 * observations, random stream and state, all sharing one policy object.
 */
function interleaved(policy: ComputePolicy, seeds: readonly number[], steps: number) {
  const runs = seeds.map((seed) => ({
    data: new Rng(seed),
    choices: new Rng(seed).fork('policy'),
    state: policy.createState?.(),
    trace: [] as AxisUsage[],
  }));
  for (let t = 0; t < steps; t++) {
    for (const run of runs) {
      const observation = randomObservation(run.data, 2 + t, 2, 6, 10);
      run.trace.push(usageOf(policy.controls(observation, run.choices, run.state)));
    }
  }
  return runs.map(({ trace }) => trace);
}

describe.each(CASES.map((c) => [c.provider.name, c] as const))('%s', (name, c) => {
  it('builds its policy for a compute budget with the documented defaults', async () => {
    expect(c.provider.budgetForms).toEqual(['compute']);
    expect(c.provider.learned).toBeUndefined();
    const prepared = await registry.prepare(name);
    expect(prepared.options).toEqual({
      actions: '2L',
      horizon: 16,
      refresh: true,
      ...(c.steered ? { alwaysDense: 6 } : {}),
    });
    const { compute, eviction } = prepared.build(budget, context(2));
    expect(eviction).toBeUndefined();
    expect(compute).toBeInstanceOf(c.policy);
    expect(compute!.name).toBe(name);
    expect(compute!.refreshEvery).toBe(16);
    expect(compute!.axes).toEqual({ tokenKeep: true, mlpInputKeep: true, activationBits: true });
  });

  it('takes presets and explicit levels, horizon and refresh', async () => {
    const options = {
      actions: { tokenKeep: [1, 0.3], mlpInputKeep: [1], activationBits: [16] },
      horizon: 4,
      refresh: false,
    };
    const compute = (await registry.prepare(name, { options })).build(budget, context(1)).compute!;
    expect(compute.axes).toEqual({ tokenKeep: true, mlpInputKeep: false, activationBits: false });
    expect(compute.refreshEvery).toBeUndefined();
    const fine = await registry.prepare(name, { options: { actions: 'FL-336', horizon: 64 } });
    expect(fine.build(budget, context(1)).compute!.refreshEvery).toBe(64);
  });

  it('refuses memory budgets and bad options with coded errors', async () => {
    const prepared = await registry.prepare(name);
    expectLetheError(() => prepared.build({ capacity: 8 }, context(1)), 'E_BUDGET', 'budget');
    expectLetheError(
      () => prepared.build({ keepRatio: 0.5, every: 4 }, context(1)),
      'E_BUDGET',
      'budget',
    );
    expectLetheError(
      () =>
        c.provider.build({
          budget: { capacity: 8 },
          options: prepared.options as never,
          context: context(1),
          parameters: undefined,
        }),
      'E_BUDGET',
      'budget',
    );
    const refused = (options: Record<string, unknown>, argument: string) =>
      expectLetheRejection(registry.prepare(name, { options }), 'E_ARG', argument);
    await refused({ actions: '4L' }, 'options.actions');
    await refused(
      { actions: { tokenKeep: [0.5, 0.5], mlpInputKeep: [1], activationBits: [16] } },
      'options.actions.tokenKeep',
    );
    await refused(
      { actions: { tokenKeep: [0.5], mlpInputKeep: [1], activationBits: [17] } },
      'options.actions.activationBits.0',
    );
    await refused(
      { actions: { tokenKeep: [0], mlpInputKeep: [1], activationBits: [16] } },
      'options.actions.tokenKeep.0',
    );
    await refused({ horizon: 0 }, 'options.horizon');
    await refused({ refresh: 'yes' }, 'options.refresh');
    await refused({ sampling: 'greedy' }, 'options.sampling');
    if (c.steered) await refused({ alwaysDense: -1 }, 'options.alwaysDense');
    else await refused({ alwaysDense: 6 }, 'options.alwaysDense');
    await expectLetheRejection(
      registry.prepare(name, { options: { foo: 1 } }),
      'E_ARG',
      'options.foo',
    );
  });

  it('is seeded, and a sequence run alone equals it in a batch (same stream)', async () => {
    const prepared = await registry.prepare(name, { options: { horizon: 5 } });
    const build = (sequences: number) => prepared.build(budget, context(sequences)).compute!;
    const batch = interleaved(build(2), [11, 12], 40);
    expect(interleaved(build(2), [11, 12], 40)).toEqual(batch);
    expect(interleaved(build(1), [11], 40)).toEqual([batch[0]]);
    expect(interleaved(build(1), [12], 40)).toEqual([batch[1]]);
    // not the dense path
    expect(batch.flat().some((usage) => usage.some((u) => u < 1))).toBe(true);
  });
});

describe('sol-random-steered', () => {
  it('meets the targets of every episode like the steered baselines, at random times', async () => {
    const prepared = await registry.prepare('sol-random-steered', { options: { horizon: 16 } });
    const policy = prepared.build(budget, context(2)).compute!;
    // 4 episodes of 16 effective steps (observations start past the always-dense entries).
    const [a, b] = interleaved(policy, [3, 4], 7 + 64).map((trace) => trace.slice(7 - 2));
    for (const trace of [a!, b!]) {
      const mean = (axis: number) => trace.reduce((s, u) => s + u[axis]!, 0) / trace.length;
      // 2L levels κ {0.1, 1}, ρ {0.6, 1}, η {5/16, 1}: steered within one level gap / 16.
      expect(Math.abs(mean(0) - 0.5)).toBeLessThan(0.9 / 8);
      expect(Math.abs(mean(1) - 0.8)).toBeLessThan(0.4 / 8);
      expect(Math.abs(mean(2) - 0.6)).toBeLessThan(0.7 / 8);
    }
    expect(a).not.toEqual(b);
  });
});
