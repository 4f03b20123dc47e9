import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  controllerConfig,
  initControllerParameters,
  SolController,
  type SolControllerConfig,
} from '../../src/index';
import { ControllerGraph } from '../../src/train/index';
import {
  type EpisodeBatch,
  randomEpisodes,
  randomParameters,
  SMALL,
  stepEpisodes,
} from '../fixtures';

beforeAll(async () => {
  await initBackend('wasm');
});

/** The parallel forward's outputs on the host (the tensors disposed). */
function forwardValues(graph: ControllerGraph, batch: EpisodeBatch) {
  const { logits, values } = graph.forward(batch);
  const out = {
    logits: logits.dataSync() as Float32Array,
    values: values.dataSync() as Float32Array,
  };
  expect(logits.shape).toEqual([batch.batch, batch.steps, graph.config.actions]);
  expect(values.shape).toEqual([batch.batch, batch.steps]);
  tf.dispose([logits, values]);
  return out;
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

const CONFIGS: [string, SolControllerConfig][] = [
  ['small', SMALL],
  [
    'default for a hidden-64 LM, 27 actions',
    controllerConfig({ inputSize: 64, actions: 27, maxHorizon: 16 }),
  ],
  [
    '3 heads, MLP ratio 2.5, T below maxHorizon',
    { inputSize: 5, width: 12, heads: 3, mlpRatio: 2.5, actionDim: 3, actions: 2, maxHorizon: 20 },
  ],
  [
    '1 head, 336 actions',
    { inputSize: 32, width: 32, heads: 1, mlpRatio: 1, actionDim: 8, actions: 336, maxHorizon: 16 },
  ],
];

describe('ControllerGraph.forward equals SolController.step, step by step', () => {
  it.each(CONFIGS)('%s: logits and values within 1e-4', (_, config) => {
    const parameters = randomParameters(config, 21);
    const graph = new ControllerGraph(parameters);
    const controller = new SolController(parameters);
    const batch = randomEpisodes(config, 3, 16, 22);
    const parallel = forwardValues(graph, batch);
    const stepped = stepEpisodes(controller, batch);
    expect(maxDifference(parallel.logits, stepped.logits)).toBeLessThanOrEqual(1e-4);
    expect(maxDifference(parallel.values, stepped.values)).toBeLessThanOrEqual(1e-4);
    graph.dispose();
  });

  /**
   * Both sides run in float32 in different orders, and at widths down to 1–3 the layer norms
   * divide by the spread of a few numbers, which magnifies the rounding: over 3,000 random cases
   * the largest difference was 2.4e-4 (a width-3 controller, logits of at most 3), 3 of them over
   * the 1e-4 the fixed configurations above meet. The bound keeps a 4× margin over that.
   */
  const RANDOM_SIZES_TOLERANCE = 1e-3;

  it('for random sizes, parameters, inputs, batch and episode lengths', () => {
    const sizes = fc.record({
      inputSize: fc.integer({ min: 1, max: 24 }),
      headDim: fc.integer({ min: 1, max: 8 }),
      heads: fc.integer({ min: 1, max: 4 }),
      mlpRatio: fc.constantFrom(1, 2, 4),
      actionDim: fc.integer({ min: 1, max: 8 }),
      actions: fc.integer({ min: 1, max: 40 }),
      maxHorizon: fc.integer({ min: 1, max: 16 }),
    });
    fc.assert(
      fc.property(
        sizes,
        fc.integer({ min: 2, max: 4 }),
        fc.nat(),
        fc.nat(),
        (s, batch, seed, t) => {
          const { headDim, ...rest } = s;
          const config: SolControllerConfig = { ...rest, width: headDim * s.heads };
          const steps = 1 + (t % s.maxHorizon);
          const parameters = randomParameters(config, seed);
          const graph = new ControllerGraph(parameters);
          const episodes = randomEpisodes(config, batch, steps, seed + 1);
          const parallel = forwardValues(graph, episodes);
          const stepped = stepEpisodes(new SolController(parameters), episodes);
          graph.dispose();
          expect(maxDifference(parallel.logits, stepped.logits)).toBeLessThanOrEqual(
            RANDOM_SIZES_TOLERANCE,
          );
          expect(maxDifference(parallel.values, stepped.values)).toBeLessThanOrEqual(
            RANDOM_SIZES_TOLERANCE,
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it('takes tensors as well as typed arrays', () => {
    const graph = new ControllerGraph(randomParameters(SMALL, 23));
    const batch = randomEpisodes(SMALL, 2, 5, 24);
    const expected = forwardValues(graph, batch);
    const tensors = {
      batch: 2,
      steps: 5,
      hidden: tf.tensor3d(batch.hidden, [2, 5, 8]),
      embedding: tf.tensor3d(batch.embedding, [2, 5, 8]),
      budget: tf.tensor3d(batch.budget, [2, 5, 8]),
      previousActions: tf.tensor2d(batch.previousActions, [2, 5], 'int32'),
    };
    const out = graph.forward(tensors);
    expect(out.logits.dataSync()).toEqual(expected.logits);
    expect(out.values.dataSync()).toEqual(expected.values);
    tf.dispose([
      out.logits,
      out.values,
      tensors.hidden,
      tensors.embedding,
      tensors.budget,
      tensors.previousActions,
    ]);
    graph.dispose();
  });
});

describe('ControllerGraph', () => {
  it('causality: changing step t changes no output of the steps before it, exactly', () => {
    const graph = new ControllerGraph(randomParameters(SMALL, 25));
    const batch = randomEpisodes(SMALL, 2, 10, 26);
    const before = forwardValues(graph, batch);
    for (const t of [1, 4, 9]) {
      const changed = {
        ...batch,
        hidden: batch.hidden.slice(),
        budget: batch.budget.slice(),
        previousActions: batch.previousActions.slice(),
      };
      // episode 1's step t: its hidden state, a budget feature and its previous action
      const r = 10 + t;
      changed.hidden[r * 8 + 2] = changed.hidden[r * 8 + 2]! - 4;
      changed.budget[r * 8 + 6] = 0.9;
      changed.previousActions[r] = (changed.previousActions[r]! + 3) % 8;
      const after = forwardValues(graph, changed);
      // episode 0 untouched; episode 1 identical before t, different at t
      expect(after.logits.subarray(0, r * 8)).toEqual(before.logits.subarray(0, r * 8));
      expect(after.values.subarray(0, r)).toEqual(before.values.subarray(0, r));
      expect(after.logits.subarray(r * 8, (r + 1) * 8)).not.toEqual(
        before.logits.subarray(r * 8, (r + 1) * 8),
      );
    }
    graph.dispose();
  });

  it('leaks no tensor: the count returns to its value once the outputs and variables are freed', () => {
    const start = tf.memory().numTensors;
    const parameters = randomParameters(SMALL, 27);
    const graph = new ControllerGraph(parameters);
    expect(tf.memory().numTensors).toBe(start + graph.variables.size);
    const withVariables = tf.memory().numTensors;
    const batch = randomEpisodes(SMALL, 3, 7, 28);
    for (let i = 0; i < 5; i++) {
      const { logits, values } = graph.forward(batch);
      expect(tf.memory().numTensors).toBe(withVariables + 2);
      tf.dispose([logits, values]);
      expect(tf.memory().numTensors).toBe(withVariables);
    }
    // a gradient step's tensors are freed as well
    const { value, grads } = tf.variableGrads(() => {
      const { logits, values } = graph.forward(batch);
      return tf.add(tf.sum(tf.square(logits)), tf.sum(values)) as tf.Scalar;
    });
    tf.dispose([value, ...Object.values(grads)]);
    expect(tf.memory().numTensors).toBe(withVariables);
    // bad input throws without leaving tensors behind
    expect(() =>
      graph.forward({ ...batch, previousActions: batch.previousActions.map(() => 8) }),
    ).toThrow();
    expect(tf.memory().numTensors).toBe(withVariables);
    expect(graph.exportParameters()).toEqual(parameters);
    graph.dispose();
    expect(tf.memory().numTensors).toBe(start);
  });

  it('exports the values it holds, and a SolController of them agrees', () => {
    const graph = new ControllerGraph(initControllerParameters(SMALL, { seed: 3 }));
    const query = graph.variables.get('block.attention.query.weight')!;
    query.assign(tf.mul(query, 2));
    const exported = graph.exportParameters();
    expect(exported.tensors['block.attention.query.weight'][5]).toBe(
      2 * initControllerParameters(SMALL, { seed: 3 }).tensors['block.attention.query.weight'][5]!,
    );
    const batch = randomEpisodes(SMALL, 2, 4, 29);
    const parallel = forwardValues(graph, batch);
    const stepped = stepEpisodes(new SolController(exported), batch);
    expect(maxDifference(parallel.logits, stepped.logits)).toBeLessThanOrEqual(1e-4);
    graph.dispose();
  });

  it('checks the batch: sizes (E_ARG), shapes (E_SHAPE), dtypes (E_DTYPE), actions (E_ARG)', () => {
    const graph = new ControllerGraph(initControllerParameters(SMALL));
    const batch = randomEpisodes(SMALL, 2, 3, 30);
    const before = tf.memory().numTensors;
    const bad = (change: object, code: string, argument: string) =>
      expectLetheError(() => graph.forward({ ...batch, ...change }), code, argument);
    expectLetheError(() => graph.forward(null as never), 'E_ARG', 'inputs');
    bad({ batch: 0 }, 'E_ARG', 'inputs.batch');
    bad({ steps: 17 }, 'E_ARG', 'inputs.steps');
    bad({ steps: 2 }, 'E_SHAPE', 'inputs.hidden');
    bad({ embedding: new Float32Array(5) }, 'E_SHAPE', 'inputs.embedding');
    bad({ budget: new Float64Array(48) }, 'E_DTYPE', 'inputs.budget');
    bad({ previousActions: Int32Array.of(-1, 0, 8, -1, 1, 2) }, 'E_ARG', 'inputs.previousActions');
    bad({ previousActions: Int32Array.of(-2, 0, 0, -1, 1, 2) }, 'E_ARG', 'inputs.previousActions');
    bad({ previousActions: new Float32Array(6) }, 'E_DTYPE', 'inputs.previousActions');
    const wrong = tf.zeros([2, 3, 7]);
    bad({ hidden: wrong }, 'E_SHAPE', 'inputs.hidden');
    const ints = tf.zeros([2, 3, 8], 'int32');
    bad({ hidden: ints }, 'E_DTYPE', 'inputs.hidden');
    tf.dispose([wrong, ints]);
    expect(tf.memory().numTensors).toBe(before);
    graph.dispose();
  });
});
