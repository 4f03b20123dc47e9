import type { RandomSource, StepObservation } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { ACTION_PRESETS } from '../../src/actions/action-presets';
import { ActionSet } from '../../src/actions/action-set';
import { FixedSchedulePolicy } from '../../src/baselines/fixed-schedule';
import { RandomSchedulePolicy } from '../../src/baselines/random-schedule';
import { meanUsage, runSequence, usageOf } from './baseline-fixtures';

const actions2L = new ActionSet(ACTION_PRESETS['2L']);
const targets = { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 };
const observation: StepObservation = {
  step: 10,
  token: 1,
  hidden: new Float32Array(4),
  livePerLayer: new Int32Array(3).fill(20),
};

/** A random source giving `values` in turn. */
const scripted = (...values: number[]): RandomSource => ({
  fillUniform(out) {
    for (let i = 0; i < out.length; i++) out[i] = values.shift()!;
    return out;
  },
});

describe('FixedSchedulePolicy (§5 fixed baseline)', () => {
  it('keeps one action per sequence; across sequences the average matches the targets', () => {
    const policy = new FixedSchedulePolicy({ actions: actions2L, targets });
    const firsts = Array.from({ length: 3000 }, (_, seed) => {
      const steps = runSequence(policy, { seed, steps: 4 });
      for (const usage of steps) expect(usage).toEqual(steps[0]);
      return steps[0]!;
    });
    const mean = meanUsage(firsts);
    // standard error ≤ 0.9·½/√3000 ≈ 0.008 per axis
    expect(Math.abs(mean[0]! - 0.5)).toBeLessThan(0.03);
    expect(Math.abs(mean[1]! - 0.8)).toBeLessThan(0.03);
    expect(Math.abs(mean[2]! - 0.6)).toBeLessThan(0.03);
    // both adjacent levels of every axis occur
    for (let axis = 0; axis < 3; axis++) {
      expect(new Set(firsts.map((u) => u[axis])).size).toBe(2);
    }
  });

  it('takes the upper level of an axis iff its uniform is below w = (C − lower)/(upper − lower)', () => {
    const policy = new FixedSchedulePolicy({ actions: actions2L, targets });
    const w = [(0.5 - 0.1) / 0.9, (0.8 - 0.6) / 0.4, (0.6 - 5 / 16) / (11 / 16)];
    const first = (...uniforms: number[]) =>
      usageOf(policy.controls(observation, scripted(...uniforms), policy.createState()));
    // (the uniforms are float32: stay clear of the boundary)
    expect(first(w[0]! - 1e-4, w[1]! + 1e-4, w[2]! - 1e-4)).toEqual([1, 0.6, 1]);
    expect(first(w[0]! + 1e-4, w[1]! - 1e-4, w[2]! + 1e-4)).toEqual([0.1, 1, 5 / 16]);
  });

  it('is exact for targets that are levels and clamps targets outside the levels', () => {
    const actions = new ActionSet(ACTION_PRESETS['3L']);
    const exact = new FixedSchedulePolicy({
      actions,
      targets: { tokenKeep: 0.6, mlpInputKeep: 0.8, precision: 7 / 16 },
    });
    const clamped = new FixedSchedulePolicy({
      actions,
      targets: { tokenKeep: 0.05, mlpInputKeep: 0.3, precision: 1 },
    });
    for (let seed = 0; seed < 50; seed++) {
      for (const usage of runSequence(exact, { seed, steps: 2 })) {
        expect(usage).toEqual([0.6, 0.8, 7 / 16]);
      }
      for (const usage of runSequence(clamped, { seed, steps: 2 })) {
        expect(usage).toEqual([0.1, 0.4, 1]);
      }
    }
  });

  it('is seeded by the sequence’s stream and declares its axes and refresh', () => {
    const policy = new FixedSchedulePolicy({ actions: actions2L, targets, horizon: 4 });
    expect(runSequence(policy, { seed: 3, steps: 5 })).toEqual(
      runSequence(policy, { seed: 3, steps: 5 }),
    );
    expect(policy.name).toBe('sol-fixed');
    expect(policy.axes).toEqual({ tokenKeep: true, mlpInputKeep: true, activationBits: true });
    expect(policy.refreshEvery).toBe(4);
    const noRefresh = new FixedSchedulePolicy({ actions: actions2L, targets, refresh: false });
    expect(noRefresh.refreshEvery).toBeUndefined();
    expect(noRefresh.horizon).toBe(16);
  });

  it('refuses bad options and a missing state with coded errors', () => {
    const make = (options: Record<string, unknown>) => () =>
      new FixedSchedulePolicy({ actions: actions2L, targets, ...options } as never);
    expectLetheError(make({ actions: ACTION_PRESETS['2L'] }), 'E_ARG', 'actions');
    expectLetheError(make({ horizon: 0 }), 'E_ARG', 'horizon');
    expectLetheError(make({ refresh: 'yes' }), 'E_ARG', 'refresh');
    expectLetheError(make({ targets: { ...targets, precision: 2 } }), 'E_ARG', 'targets.precision');
    expectLetheError(() => new FixedSchedulePolicy(null as never), 'E_ARG', 'options');
    const policy = new FixedSchedulePolicy({ actions: actions2L, targets });
    expectLetheError(() => policy.controls(observation, scripted(0, 0, 0)), 'E_STATE', 'state');
  });
});

describe('RandomSchedulePolicy (App. A random schedules)', () => {
  it('draws every action about equally often, from the sequence’s stream', () => {
    const policy = new RandomSchedulePolicy({ actions: actions2L });
    const steps = runSequence(policy, { seed: 7, steps: 8000 });
    const counts = new Map<string, number>();
    for (const usage of steps) counts.set(String(usage), (counts.get(String(usage)) ?? 0) + 1);
    expect(counts.size).toBe(8);
    // binomial(8000, 1/8): sd ≈ 30
    for (const count of counts.values()) expect(Math.abs(count - 1000)).toBeLessThan(150);
    expect(runSequence(policy, { seed: 7, steps: 50 })).toEqual(steps.slice(0, 50));
    expect(runSequence(policy, { seed: 8, steps: 50 })).not.toEqual(steps.slice(0, 50));
  });

  it('declares the enabled axes only and refuses a source outside [0, 1)', () => {
    const actions = new ActionSet({
      tokenKeep: [0.25, 1],
      mlpInputKeep: [1],
      activationBits: [16],
    });
    const policy = new RandomSchedulePolicy({ actions, horizon: 3 });
    expect(policy.name).toBe('sol-random');
    expect(policy.axes).toEqual({ tokenKeep: true, mlpInputKeep: false, activationBits: false });
    expect(policy.refreshEvery).toBe(3);
    expect(usageOf(policy.controls(observation, scripted(0.3)))).toEqual([0.25, 1, 1]);
    expect(usageOf(policy.controls(observation, scripted(0.7)))).toEqual([1, 1, 1]);
    expectLetheError(() => policy.controls(observation, scripted(1)), 'E_ARG', 'rng');
    expectLetheError(() => new RandomSchedulePolicy({ actions, horizon: 1.5 }), 'E_ARG', 'horizon');
  });
});
