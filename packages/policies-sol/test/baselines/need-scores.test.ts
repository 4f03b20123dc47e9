import { Rng } from '@lethe/core';
import type { StepObservation } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTION_PRESETS } from '../../src/actions/action-presets';
import { ActionSet, type AxisUsage } from '../../src/actions/action-set';
import { steerAction } from '../../src/baselines/budget-steering';
import { cosineDrift } from '../../src/baselines/cosine-drift';
import { DriftAwarePolicy } from '../../src/baselines/drift-aware';
import { EntropyMatchedPolicy } from '../../src/baselines/entropy-matched';
import { normalisedEntropy } from '../../src/baselines/normalised-entropy';
import { SteeredEpisodeBudget } from '../../src/baselines/steered-budget';
import type { SteeredPolicy } from '../../src/baselines/steered-policy';
import { randomObservation, usageOf } from './baseline-fixtures';

const vectorArb = (length: number) =>
  fc.float32Array({ minLength: length, maxLength: length, min: -8, max: 8, noNaN: true });

/** −Σ p log p / log V, by the definition. */
function bruteEntropy(logits: Float32Array): number {
  const weights = Array.from(logits, (x) => Math.exp(x));
  const total = weights.reduce((a, b) => a + b, 0);
  const h = weights.reduce(
    (sum, w) => (w === 0 ? sum : sum - (w / total) * Math.log(w / total)),
    0,
  );
  return logits.length === 1 ? 0 : h / Math.log(logits.length);
}

/** ½(1 − a·b / (|a||b|)), by the definition. */
function bruteDrift(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  const norm = (v: Float32Array) => Math.hypot(...v);
  return (1 - dot / (norm(a) * norm(b))) / 2;
}

describe('normalisedEntropy (EMC’s Ĥ)', () => {
  it('matches −Σ p log p / log V', () => {
    fc.assert(
      fc.property(
        fc.float32Array({ minLength: 1, maxLength: 40, min: -20, max: 20, noNaN: true }),
        (logits) => {
          expect(normalisedEntropy(logits)).toBeCloseTo(bruteEntropy(logits), 6);
        },
      ),
    );
  });

  it('is 1 for a uniform distribution and 0 for a certain one', () => {
    expect(normalisedEntropy(new Float32Array(7).fill(3))).toBeCloseTo(1, 12);
    const certain = new Float32Array(5).fill(Number.NEGATIVE_INFINITY);
    certain[2] = 0;
    expect(normalisedEntropy(certain)).toBe(0);
    expect(normalisedEntropy(Float32Array.of(4))).toBe(0);
    // large logits do not overflow
    expect(normalisedEntropy(Float32Array.of(1e30, 1e30))).toBeCloseTo(1, 12);
  });

  it('refuses what are not logits', () => {
    expectLetheError(() => normalisedEntropy(new Float32Array(0)), 'E_ARG', 'logits');
    expectLetheError(() => normalisedEntropy([1, 2] as never), 'E_ARG', 'logits');
    expectLetheError(() => normalisedEntropy(Float32Array.of(1, Number.NaN), 'x'), 'E_ARG', 'x');
    expectLetheError(
      () => normalisedEntropy(Float32Array.of(1, Number.POSITIVE_INFINITY)),
      'E_ARG',
      'logits',
    );
    expectLetheError(
      () => normalisedEntropy(new Float32Array(3).fill(Number.NEGATIVE_INFINITY)),
      'E_ARG',
      'logits',
    );
  });
});

describe('cosineDrift (DAC’s d)', () => {
  it('matches ½(1 − cos) computed by brute force', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }).chain((n) => fc.tuple(vectorArb(n), vectorArb(n))),
        ([a, b]) => {
          fc.pre(a.some((x) => x !== 0) && b.some((x) => x !== 0));
          const drift = cosineDrift(a, b);
          expect(drift).toBeCloseTo(bruteDrift(a, b), 6);
          expect(drift >= 0 && drift <= 1).toBe(true);
        },
      ),
    );
  });

  it('is 0 for the same direction, ½ orthogonal or zero, 1 opposite', () => {
    expect(cosineDrift(Float32Array.of(1, 2), Float32Array.of(2, 4))).toBeCloseTo(0, 12);
    expect(cosineDrift(Float32Array.of(1, 0), Float32Array.of(0, 3))).toBe(0.5);
    expect(cosineDrift(Float32Array.of(1, 2), Float32Array.of(-1, -2))).toBeCloseTo(1, 12);
    expect(cosineDrift(Float32Array.of(0, 0), Float32Array.of(1, 2))).toBe(0.5);
  });

  it('refuses vectors of other lengths or non-finite values', () => {
    expectLetheError(() => cosineDrift(Float32Array.of(1), Float32Array.of(1, 2)), 'E_SHAPE', 'b');
    expectLetheError(
      () => cosineDrift(Float32Array.of(Number.NaN), Float32Array.of(1)),
      'E_ARG',
      'a',
    );
    expectLetheError(() => cosineDrift(Float32Array.of(1), [1] as never, ['h', 'g']), 'E_ARG', 'g');
  });
});

const actions = new ActionSet(ACTION_PRESETS['3L']);
const targets = { tokenKeep: 0.45, mlpInputKeep: 0.7, precision: 0.5 };
const HORIZON = 5;
const ALWAYS_DENSE = 6;

/**
 * What a steered policy must do, step by step: the reference need score, the steering rule over
 * the policy's episodes (reset every `HORIZON` steps), only steps past `ALWAYS_DENSE` counted.
 */
function referenceRun(
  observations: readonly StepObservation[],
  need: (t: number, episodeStart: boolean) => number,
): AxisUsage[] {
  const budgetTargets: AxisUsage = [targets.tokenKeep, targets.mlpInputKeep, targets.precision];
  let budget = new SteeredEpisodeBudget(HORIZON, budgetTargets);
  return observations.map((observation, t) => {
    if (budget.done) budget = new SteeredEpisodeBudget(HORIZON, budgetTargets);
    const action = steerAction(actions, budget, need(t, budget.steps === 0));
    const usage = actions.usage(action);
    budget.record(usage, observation.step > ALWAYS_DENSE);
    return usage;
  });
}

/** Random observations from position 2 (the first steps not effective), one reused buffer each. */
function observations(seed: number, steps: number) {
  const data = new Rng(seed);
  return Array.from({ length: steps }, (_, t) => randomObservation(data, 2 + t, 3, 6, 10));
}

/** Runs `policy` over `list`, writing each observation into reused buffers first. */
function runReusingBuffers(policy: SteeredPolicy<unknown>, list: readonly StepObservation[]) {
  const state = policy.createState();
  const hidden = new Float32Array(6);
  const embedding = new Float32Array(6);
  return list.map((observation) => {
    hidden.set(observation.hidden);
    embedding.set(observation.embedding!);
    const controls = policy.controls({ ...observation, hidden, embedding }, new Rng(0), state);
    expect(controls.length).toBe(3);
    return usageOf(controls);
  });
}

const options = { actions, targets, horizon: HORIZON, alwaysDense: ALWAYS_DENSE };

describe('EntropyMatchedPolicy (App. C EMC)', () => {
  it('steers with the normalised entropy of the previous step’s logits', () => {
    const policy = new EntropyMatchedPolicy(options);
    expect(policy.name).toBe('sol-emc');
    expect(policy.needs).toEqual({ embedding: false, logits: true });
    expect(policy.refreshEvery).toBe(HORIZON);
    for (const seed of [1, 2, 3]) {
      const list = observations(seed, 23);
      const expected = referenceRun(list, (t) => bruteEntropy(list[t]!.logits));
      expect(runReusingBuffers(policy, list)).toEqual(expected);
    }
  });

  it('fails a step without logits, or without a state', () => {
    const policy = new EntropyMatchedPolicy(options);
    const { logits: _, ...withoutLogits } = observations(1, 1)[0]!;
    expectLetheError(
      () => policy.controls(withoutLogits, new Rng(0), policy.createState()),
      'E_ARG',
      'observation.logits',
    );
    expectLetheError(() => policy.controls(withoutLogits, new Rng(0)), 'E_STATE', 'state');
    expectLetheError(
      () => new EntropyMatchedPolicy({ ...options, alwaysDense: -1 }),
      'E_ARG',
      'alwaysDense',
    );
    expectLetheError(
      () => new EntropyMatchedPolicy({ ...options, targets: { ...targets, tokenKeep: -0.1 } }),
      'E_ARG',
      'targets.tokenKeep',
    );
  });
});

describe('DriftAwarePolicy (App. C DAC)', () => {
  it('steers with the drift of consecutive hidden states (embeddings at an episode start)', () => {
    const policy = new DriftAwarePolicy(options);
    expect(policy.name).toBe('sol-dac');
    expect(policy.needs).toEqual({ embedding: true });
    for (const seed of [1, 2, 3]) {
      const list = observations(seed, 23);
      const expected = referenceRun(list, (t, episodeStart) => {
        if (t === 0) return 0.5;
        const [now, before] = [list[t]!, list[t - 1]!];
        return episodeStart
          ? bruteDrift(now.embedding!, before.embedding!)
          : bruteDrift(now.hidden, before.hidden);
      });
      expect(runReusingBuffers(policy, list)).toEqual(expected);
    }
  });

  it('keeps every episode on the targets when all its steps are effective', () => {
    const policy = new DriftAwarePolicy({ ...options, horizon: 16 });
    const list = observations(4, 64).map((o) => ({ ...o, step: o.step + 10 }));
    const used = runReusingBuffers(policy, list);
    for (let episode = 0; episode < 4; episode++) {
      const steps = used.slice(16 * episode, 16 * (episode + 1));
      // 3L: largest gaps 0.5 (κ), 0.4 (ρ), 9/16 (η) over 16 effective steps
      [0.5, 0.4, 9 / 16].forEach((gap, axis) => {
        const mean = steps.reduce((sum, u) => sum + u[axis]!, 0) / 16;
        const target = [targets.tokenKeep, targets.mlpInputKeep, targets.precision][axis]!;
        expect(Math.abs(mean - target)).toBeLessThanOrEqual(gap / 16 + 1e-9);
      });
    }
  });

  it('fails a step without an embedding, or with a hidden state of another width', () => {
    const policy = new DriftAwarePolicy(options);
    const state = policy.createState();
    const [first, second] = observations(1, 2);
    const { embedding: _, ...withoutEmbedding } = first!;
    expectLetheError(
      () => policy.controls(withoutEmbedding, new Rng(0), state),
      'E_ARG',
      'observation.embedding',
    );
    policy.controls(first!, new Rng(0), state);
    expectLetheError(
      () => policy.controls({ ...second!, hidden: new Float32Array(4) }, new Rng(0), state),
      'E_SHAPE',
      'observation.hidden',
    );
  });
});
