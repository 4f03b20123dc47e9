import type { ComputePolicy, LayerControls, StepObservation } from '@lethe/kv-cache';
import { type DecoderModel, GenerationSession } from '@lethe/model';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ActionSet,
  type AxisUsage,
  BUDGET_FEATURES,
  controllerConfig,
  EpisodeBudget,
  initControllerParameters,
  SolController,
} from '../../src/index';
import {
  ControllerGraph,
  counterfactualRollouts,
  type RolloutGroup,
  type RolloutInput,
} from '../../src/train/index';
import { documents, jointActions, LM_CONFIG, tinyController, tinyModel } from './train-fixtures';

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = tinyModel();
});
afterAll(() => model.dispose());

const actions = jointActions();
const parameters = tinyController(actions);
const D = LM_CONFIG.hidden_size;
const P = 8;
const T = 5;
const K = 3;
const docs = documents(2, 20);
const inputs: RolloutInput[] = [
  { document: docs[0]!, targets: [0.4, 0.7, 0.6] },
  { document: docs[1]!, targets: [0.9, 0.5, 0.8] },
];

/** The LM's own log-softmax at `index`, float64 (written out here, independent of the trainer's). */
function logSoftmaxAt(logits: Float32Array, index: number, temperature = 1): number {
  const scaled = Array.from(logits, (l) => l / temperature);
  const max = Math.max(...scaled);
  const total = scaled.reduce((sum, l) => sum + Math.exp(l - max), 0);
  return scaled[index]! - max - Math.log(total);
}

/** A compute policy replaying a fixed action schedule with every knob set explicitly. */
class FixedSchedule implements ComputePolicy {
  readonly name = 'fixed-schedule';
  readonly needs = { embedding: true };
  readonly observed: { hidden: Float32Array; embedding: Float32Array; step: number }[] = [];
  constructor(
    private readonly actions: ActionSet,
    private readonly schedule: Int32Array,
  ) {}
  controls(observation: StepObservation): readonly (LayerControls | undefined)[] {
    const { tokenKeep, mlpInputKeep, activationBits } = this.actions.action(
      this.schedule[this.observed.length]!,
    );
    this.observed.push({
      hidden: observation.hidden.slice(),
      embedding: observation.embedding!.slice(),
      step: observation.step,
    });
    return Array.from({ length: observation.livePerLayer.length }, () => ({
      tokenKeep,
      mlpInputKeep,
      activationBits,
    }));
  }
}

/** One schedule replayed alone: dense prefill of the whole prefix, then its actions. */
async function replay(document: Int32Array, schedule: Int32Array, prefix: number) {
  const policy = new FixedSchedule(actions, schedule);
  const session = new GenerationSession({ model, compute: policy });
  await session.prefill([document.subarray(0, prefix)]);
  const rewards: number[] = [];
  for (let t = 0; t < schedule.length; t++) {
    const { logits } = await session.step([0], Int32Array.of(document[prefix + t]!));
    rewards.push(logSoftmaxAt(logits[0]!, document[prefix + t + 1]!));
  }
  return { rewards, observed: policy.observed };
}

function rollouts(prefix = P, firstStream = 0): Promise<RolloutGroup[]> {
  return counterfactualRollouts(model, new SolController(parameters), actions, inputs, {
    prefix,
    horizon: T,
    groupSize: K,
    seed: 7,
    firstStream,
  });
}

describe('counterfactualRollouts', () => {
  it('records K schedules per input over the same teacher-forced path, leaking no tensor', async () => {
    const before = tf.memory().numTensors;
    const groups = await rollouts();
    expect(tf.memory().numTensors).toBe(before);
    expect(groups).toHaveLength(2);
    groups.forEach((group, i) => {
      expect(group.targets).toEqual(inputs[i]!.targets);
      expect(group.schedules).toHaveLength(K);
      for (const schedule of group.schedules) {
        expect(schedule.actions).toHaveLength(T);
        expect(schedule.hidden).toHaveLength(T * D);
        expect(schedule.budget).toHaveLength(T * BUDGET_FEATURES);
        expect(Array.from(schedule.effective)).toEqual([1, 1, 1, 1, 1]);
        expect(schedule.previousActions[0]).toBe(-1);
        expect(Array.from(schedule.previousActions.subarray(1))).toEqual(
          Array.from(schedule.actions.subarray(0, T - 1)),
        );
        // the first step reads the dense prefill's hidden state: equal across the group
        expect(schedule.hidden.subarray(0, D)).toEqual(group.schedules[0]!.hidden.subarray(0, D));
        for (const r of schedule.rewards) expect(r).toBeLessThan(0);
      }
    });
    // the schedules of a group sample different actions (independent streams), and the actions
    // change what the LM predicts
    const all = groups.flatMap((g) => g.schedules.map((s) => Array.from(s.actions).join()));
    expect(new Set(all).size).toBeGreaterThan(1);
    const lastRewards = groups.flatMap((g) => g.schedules.map((s) => s.rewards[T - 1]));
    expect(new Set(lastRewards).size).toBeGreaterThan(1);
  });

  it('rewards and observations equal a replay of each schedule alone with a fixed-schedule policy', async () => {
    for (const prefix of [P, 1]) {
      const groups = await rollouts(prefix);
      for (const [i, group] of groups.entries()) {
        for (const schedule of group.schedules) {
          const { rewards, observed } = await replay(inputs[i]!.document, schedule.actions, prefix);
          rewards.forEach((r, t) => {
            expect(Math.abs(r - schedule.rewards[t]!)).toBeLessThan(1e-5);
          });
          observed.forEach(({ hidden, embedding, step }, t) => {
            expect(step).toBe(prefix + t);
            hidden.forEach((h, c) => {
              expect(Math.abs(h - schedule.hidden[t * D + c]!)).toBeLessThan(1e-4);
            });
            expect(embedding).toEqual(schedule.embedding.subarray(t * D, (t + 1) * D));
          });
        }
      }
    }
  });

  it('takes a prefix per input: each input replays alone from its own prefix', async () => {
    const own = [1, P];
    const groups = await counterfactualRollouts(
      model,
      new SolController(parameters),
      actions,
      inputs.map((input, i) => ({ ...input, prefix: own[i]! })),
      { prefix: P, horizon: T, groupSize: K, seed: 7 },
    );
    for (const [i, group] of groups.entries()) {
      for (const schedule of group.schedules) {
        const { rewards, observed } = await replay(inputs[i]!.document, schedule.actions, own[i]!);
        rewards.forEach((r, t) => {
          expect(Math.abs(r - schedule.rewards[t]!)).toBeLessThan(1e-5);
        });
        expect(observed[0]!.step).toBe(own[i]);
      }
    }
    await expect(
      counterfactualRollouts(
        model,
        new SolController(parameters),
        actions,
        inputs.map((input) => ({ ...input, prefix: 0 })),
        { prefix: P, horizon: T, groupSize: K },
      ),
    ).rejects.toThrow(/inputs\[0\]\.prefix/);
  });

  it('records the budget features, effective flags and sampling log-probs SolPolicy’s step would', async () => {
    const groups = await rollouts(3);
    const controller = new SolController(parameters);
    for (const group of groups) {
      for (const schedule of group.schedules) {
        const budget = new EpisodeBudget(T, group.targets);
        const episode = controller.newEpisode();
        for (let t = 0; t < T; t++) {
          // prefix 3 ≤ 6 always-dense entries: the first steps do not count toward the budget
          const effective = 3 + t > 6;
          expect(schedule.effective[t]).toBe(effective ? 1 : 0);
          const features = budget.features(effective);
          expect(schedule.budget.subarray(t * 8, (t + 1) * 8)).toEqual(features);
          const { logits } = controller.step(episode, {
            hidden: schedule.hidden.subarray(t * D, (t + 1) * D),
            embedding: schedule.embedding.subarray(t * D, (t + 1) * D),
            budget: features,
            previousAction: schedule.previousActions[t]!,
          });
          expect(schedule.logProbs[t]).toBeCloseTo(
            logSoftmaxAt(logits, schedule.actions[t]!, 1.3),
            12,
          );
          budget.record(actions.usage(schedule.actions[t]!), effective);
        }
        expect(schedule.realised).toEqual(budget.realised());
      }
    }
  });

  it('feeds the tfjs graph the same inputs: its tempered log-probs match the recorded ones', async () => {
    const schedules = (await rollouts()).flatMap((g) => g.schedules);
    const graph = new ControllerGraph(parameters);
    const n = schedules.length;
    const concat = (pick: (s: (typeof schedules)[number]) => Float32Array) => {
      const out = new Float32Array(n * pick(schedules[0]!).length);
      schedules.forEach((s, i) => out.set(pick(s), i * pick(s).length));
      return out;
    };
    const previousActions = new Int32Array(n * T);
    schedules.forEach((s, i) => previousActions.set(s.previousActions, i * T));
    const { logits, values } = graph.forward({
      batch: n,
      steps: T,
      hidden: concat((s) => s.hidden),
      embedding: concat((s) => s.embedding),
      budget: concat((s) => s.budget),
      previousActions,
    });
    const flat = logits.dataSync() as Float32Array;
    tf.dispose([logits, values]);
    graph.dispose();
    const A = actions.size;
    schedules.forEach((s, i) => {
      for (let t = 0; t < T; t++) {
        const row = flat.subarray((i * T + t) * A, (i * T + t + 1) * A);
        expect(Math.abs(logSoftmaxAt(row, s.actions[t]!, 1.3) - s.logProbs[t]!)).toBeLessThan(1e-4);
      }
    });
  });

  it('repeats with the same streams and differs with others', async () => {
    const actionsOf = (groups: RolloutGroup[]) =>
      groups.flatMap((g) => g.schedules.map((s) => Array.from(s.actions)));
    const first = actionsOf(await rollouts());
    expect(actionsOf(await rollouts())).toEqual(first);
    expect(actionsOf(await rollouts(P, 100))).not.toEqual(first);
  });

  it('refuses bad inputs and settings with coded errors naming them', async () => {
    const controller = new SolController(parameters);
    const settings = { prefix: P, horizon: T, groupSize: K };
    const run = (
      overrides: {
        inputs?: RolloutInput[];
        settings?: object;
        controller?: SolController;
        actions?: ActionSet;
      } = {},
    ) =>
      counterfactualRollouts(
        model,
        overrides.controller ?? controller,
        overrides.actions ?? actions,
        overrides.inputs ?? inputs,
        { ...settings, ...overrides.settings },
      );
    const cases: [() => Promise<unknown>, string, string][] = [
      [
        () =>
          run({ inputs: [inputs[0]!, { ...inputs[1]!, document: docs[1]!.subarray(0, P + T) }] }),
        'E_ARG',
        'inputs[1].document',
      ],
      [
        () =>
          run({
            inputs: [{ ...inputs[0]!, document: Int32Array.of(...docs[0]!.subarray(0, 13), 19) }],
          }),
        'E_ARG',
        'inputs[0].document',
      ],
      [
        () => run({ inputs: [{ ...inputs[0]!, targets: [1.5, 0, 0] as AxisUsage }] }),
        'E_ARG',
        'inputs[0].targets',
      ],
      [() => run({ inputs: [] }), 'E_ARG', 'inputs'],
      [() => run({ settings: { horizon: 9 } }), 'E_ARG', 'settings.horizon'],
      [() => run({ settings: { prefix: 0 } }), 'E_ARG', 'settings.prefix'],
      [() => run({ settings: { prefix: 124 } }), 'E_ARG', 'settings.prefix'],
      [() => run({ settings: { groupSize: 0 } }), 'E_ARG', 'settings.groupSize'],
      [() => run({ settings: { temperature: 0 } }), 'E_ARG', 'settings.temperature'],
      [() => run({ settings: { firstStream: -1 } }), 'E_ARG', 'settings.firstStream'],
      [
        () =>
          run({
            controller: new SolController(
              initControllerParameters(controllerConfig({ inputSize: 8, actions: actions.size })),
            ),
          }),
        'E_CHECKPOINT',
        'inputSize',
      ],
      [
        () => counterfactualRollouts(null as never, controller, actions, inputs, settings),
        'E_ARG',
        'model',
      ],
      [
        () =>
          run({
            actions: new ActionSet({
              tokenKeep: [0.1, 1],
              mlpInputKeep: [0.6, 1],
              activationBits: [16],
            }),
          }),
        'E_ARG',
        'actions',
      ],
    ];
    for (const [attempt, code, argument] of cases) {
      await expect(attempt()).rejects.toMatchObject({ code, argument });
    }
  });
});
