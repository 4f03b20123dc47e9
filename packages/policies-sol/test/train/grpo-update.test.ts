import { AdamW, initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { SolController } from '../../src/index';
import {
  ControllerGraph,
  grpoUpdate,
  policyVariables,
  type ScheduleSteps,
} from '../../src/train/index';
import { randomEpisodes, randomParameters, SMALL, stepInput } from '../fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

const BATCH = 4;
const STEPS = 3;
const TEMPERATURE = 1.3;
const parameters = randomParameters({ ...SMALL, maxHorizon: 4 }, 21);

/** `BATCH` recorded schedules: random inputs, the controller's own logits, chosen actions. */
function schedules(actionOf: (i: number, t: number) => number): ScheduleSteps[] {
  const episodes = randomEpisodes(parameters.config, BATCH, STEPS, 22);
  const controller = new SolController(parameters);
  const { inputSize, actions } = parameters.config;
  return Array.from({ length: BATCH }, (_, i) => {
    const episode = controller.newEpisode();
    const logProbs = new Float64Array(STEPS);
    const chosen = new Int32Array(STEPS);
    for (let t = 0; t < STEPS; t++) {
      const { logits } = controller.step(episode, stepInput(episodes, i * STEPS + t, inputSize));
      chosen[t] = actionOf(i, t) % actions;
      const scaled = Array.from(logits, (l) => l / TEMPERATURE);
      const max = Math.max(...scaled);
      logProbs[t] =
        scaled[chosen[t]!]! - max - Math.log(scaled.reduce((s, l) => s + Math.exp(l - max), 0));
    }
    const rows = (values: Float32Array, width: number) =>
      values.slice(i * STEPS * width, (i + 1) * STEPS * width);
    return {
      targets: [0.5, 0.5, 0.5],
      hidden: rows(episodes.hidden, inputSize),
      embedding: rows(episodes.embedding, inputSize),
      budget: rows(episodes.budget, 8),
      previousActions: episodes.previousActions.slice(i * STEPS, (i + 1) * STEPS),
      actions: chosen,
      logProbs,
      effective: new Uint8Array(STEPS).fill(1),
    };
  });
}

const OPTIONS = {
  temperature: TEMPERATURE,
  clipRange: 0.2,
  entropyCoefficient: 0,
  lr: 1e-2,
  maxGradNorm: 2,
  step: 1,
};

/** Mean recorded-action log-probability of `graph` over `steps`. */
function meanLogProb(graph: ControllerGraph, steps: ScheduleSteps[]): number {
  const { actions } = graph.config;
  const controller = new SolController(graph.exportParameters());
  let sum = 0;
  for (const s of steps) {
    const episode = controller.newEpisode();
    for (let t = 0; t < STEPS; t++) {
      const { logits } = controller.step(episode, {
        hidden: s.hidden.subarray(t * SMALL.inputSize, (t + 1) * SMALL.inputSize),
        embedding: s.embedding.subarray(t * SMALL.inputSize, (t + 1) * SMALL.inputSize),
        budget: s.budget.subarray(t * 8, (t + 1) * 8),
        previousAction: s.previousActions[t]!,
      });
      const scaled = Array.from(logits.subarray(0, actions), (l) => l / TEMPERATURE);
      const max = Math.max(...scaled);
      sum +=
        scaled[s.actions[t]!]! - max - Math.log(scaled.reduce((a, l) => a + Math.exp(l - max), 0));
    }
  }
  return sum / (steps.length * STEPS);
}

describe('grpoUpdate', () => {
  it('raises the probability of actions with positive advantages; the value head stays', async () => {
    const steps = schedules((i, t) => 3 * i + t);
    const graph = new ControllerGraph(parameters);
    const optimizer = new AdamW(graph.variables);
    const before = tf.memory().numTensors;
    const start = meanLogProb(graph, steps);
    const result = await grpoUpdate(
      graph,
      optimizer,
      steps,
      new Float32Array(BATCH * STEPS).fill(1),
      OPTIONS,
    );
    expect(tf.memory().numTensors).toBe(before);
    // on-policy: ratios 1, so the loss is −mean(A) = −1
    expect(result.loss).toBeCloseTo(-1, 4);
    expect(result.gradNorm).toBeGreaterThan(0);
    expect(result.entropy).toBeGreaterThan(0);
    expect(meanLogProb(graph, steps)).toBeGreaterThan(start);
    const exported = graph.exportParameters();
    expect(exported.tensors['value_head.weight']).toEqual(parameters.tensors['value_head.weight']);
    expect(exported.tensors['value_head.bias']).toEqual(parameters.tensors['value_head.bias']);
    expect([...policyVariables(graph).keys()].some((name) => name.startsWith('value_head'))).toBe(
      false,
    );
    optimizer.dispose();
    graph.dispose();
  });

  it('refuses a non-finite loss before changing anything, leaking nothing', async () => {
    const steps = schedules((i, t) => i + t);
    const graph = new ControllerGraph(parameters);
    const optimizer = new AdamW(graph.variables);
    const before = tf.memory().numTensors;
    const advantages = new Float32Array(BATCH * STEPS).fill(1);
    advantages[2] = Number.NaN;
    await expect(grpoUpdate(graph, optimizer, steps, advantages, OPTIONS)).rejects.toMatchObject({
      code: 'E_STATE',
      argument: 'loss',
    });
    expect(tf.memory().numTensors).toBe(before);
    expect(optimizer.step).toBe(0);
    expect(graph.exportParameters().tensors['policy_head.weight']).toEqual(
      parameters.tensors['policy_head.weight'],
    );
    await expect(
      grpoUpdate(graph, optimizer, steps, new Float32Array(5), OPTIONS),
    ).rejects.toMatchObject({
      code: 'E_SHAPE',
      argument: 'advantages',
    });
    await expect(
      grpoUpdate(graph, optimizer, [], new Float32Array(0), OPTIONS),
    ).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'schedules',
    });
    const short = { ...steps[1]!, actions: steps[1]!.actions.subarray(0, 2) };
    await expect(
      grpoUpdate(graph, optimizer, [steps[0]!, short], new Float32Array(2 * STEPS), OPTIONS),
    ).rejects.toMatchObject({ code: 'E_SHAPE', argument: 'schedules[1]' });
    expect(tf.memory().numTensors).toBe(before);
    optimizer.dispose();
    graph.dispose();
  });
});
