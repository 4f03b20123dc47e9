import { Rng } from '@lethe/core';
import type { ComputePolicy, LayerControls, PreparedPolicy } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { DecoderModel } from '../decoder/decoder-model';
import { releaseCache } from '../runtime/default-cache';
import { generate } from '../runtime/generate';
import { policyContextOf } from '../runtime/policy-context';
import { expectEveryEntryKept } from './cache-checks';
import { expectNoLeak } from './generate-loop';
import { expectSame, expectThat } from './matrix-failure';
import { type MatrixMode, modeBudget } from './matrix-modes';

/** One step's controls as plain data: per layer, the knobs set (`{}` for a dense layer). */
export type PlainControls = Record<string, number>[];

/** Checks one step's controls: one entry per layer, each knob in its range. */
function expectValidControls(
  controls: readonly (LayerControls | undefined)[],
  layers: number,
  where: string,
): void {
  expectThat(
    controls.length === layers,
    'controls per layer',
    where,
    () => `${controls.length} for ${layers} layers`,
  );
  for (const [l, layer] of controls.entries()) {
    if (layer === undefined) continue;
    const { tokenKeep, mlpInputKeep, activationBits } = layer;
    for (const rate of [tokenKeep, mlpInputKeep]) {
      expectThat(
        rate === undefined || (rate > 0 && rate <= 1),
        'keep rates in (0, 1]',
        where,
        () => `layer ${l}: rate ${rate}`,
      );
    }
    expectThat(
      activationBits === undefined ||
        (Number.isInteger(activationBits) && activationBits >= 2 && activationBits <= 16),
      'activation bits an integer in [2, 16]',
      where,
      () => `layer ${l}: ${activationBits} bits`,
    );
  }
}

function plainControls(controls: readonly (LayerControls | undefined)[]): PlainControls {
  return controls.map((layer) => ({ ...(layer ?? {}) }) as Record<string, number>);
}

/**
 * The controls loop of a compute policy (its KVCache loop): the sequences run interleaved step by
 * step — each with its own random observations (hidden state, embedding and logits when asked
 * for, token), random stream and policy state, all sharing one policy object — for `steps` steps
 * from position `firstStep`; every step's controls are checked. Returns each sequence's controls,
 * step by step.
 *
 * @throws PolicyMatrixFailure naming the check and the step.
 */
export function controlsLoop(
  policy: ComputePolicy,
  seeds: readonly number[],
  steps: number,
  shape: { readonly layers: number; readonly hiddenSize: number; readonly vocabSize?: number },
  firstStep: number,
): PlainControls[][] {
  const runs = seeds.map((seed) => ({
    data: new Rng(seed),
    choices: new Rng(seed).fork('policy'),
    state: policy.createState?.(),
    trace: [] as PlainControls[],
  }));
  for (let t = 0; t < steps; t++) {
    for (const [s, run] of runs.entries()) {
      const observation = {
        step: firstStep + t,
        token: Math.floor(run.data.uniform(1)[0]! * 30),
        hidden: run.data.normal(shape.hiddenSize),
        ...(policy.needs?.embedding ? { embedding: run.data.normal(shape.hiddenSize) } : {}),
        ...(policy.needs?.logits ? { logits: run.data.normal(shape.vocabSize ?? 2) } : {}),
        livePerLayer: new Int32Array(shape.layers).fill(2 * (firstStep + t)),
      };
      const controls = policy.controls(observation, run.choices, run.state);
      expectValidControls(controls, shape.layers, `controls loop, sequence ${s}, step ${t}`);
      run.trace.push(plainControls(controls));
    }
  }
  return runs.map(({ trace }) => trace);
}

/** What one `generate()` run of a compute policy produced. */
export interface ComputeOutcome {
  readonly tokens: number[][];
  /** Each sequence's realised per-axis averages, `[κ̄, ρ̄, η̄]`, and the steps they cover. */
  readonly usage: { steps: number; axes: number[] }[];
  readonly refreshes: number[];
}

/**
 * The `generate()` loop of a compute policy: greedy decoding of `prompts` on `model` under the
 * compute policy built for the batch. Checks: no tensor left behind, the cache keeps every entry
 * (a compute policy evicts nothing), the realised averages in [0, 1] over every decode step, and
 * one KV refresh per `refreshEvery` decode steps.
 *
 * @throws PolicyMatrixFailure naming the check.
 */
export async function computeGenerateLoop(
  prepared: PreparedPolicy,
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
  mode: MatrixMode,
): Promise<ComputeOutcome> {
  const where = `generate(), ${prompts.length} sequence(s)`;
  const context = policyContextOf(model, prompts.length);
  const { compute, eviction } = prepared.build(modeBudget(mode, 2), context);
  expectThat(compute !== undefined, 'builds a compute policy', where, () => 'none was built');
  expectThat(
    eviction === undefined,
    'a compute policy evicts nothing',
    where,
    () => 'it built an eviction policy',
  );
  const before = tf.memory().numTensors;
  const result = await generate({
    model,
    prompts,
    streamIds,
    maxNewTokens: 20,
    sampling: { temperature: 0 },
    seed: 5,
    compute,
  });
  expectNoLeak(before, where);
  const { stats } = result;
  for (const [b, cache] of result.caches.entries()) {
    const at = `${where}, sequence ${b}`;
    const fed = prompts[b]!.length + result.tokens[b]!.length - 1;
    expectEveryEntryKept(cache, fed, at);
    const decodeSteps = result.tokens[b]!.length - 1;
    const usage = stats.compute[b]!;
    expectSame(usage.steps, decodeSteps, 'realised compute over every decode step', at);
    for (const axis of [usage.tokenKeep, usage.mlpInputKeep, usage.precision]) {
      expectThat(axis >= 0 && axis <= 1, 'realised averages in [0, 1]', at, () => `${axis}`);
    }
    const every = compute.refreshEvery;
    const refreshes = every === undefined ? 0 : Math.floor(decodeSteps / every);
    expectSame(stats.refreshes[b], refreshes, 'one KV refresh per episode', at);
  }
  for (const cache of result.caches) releaseCache(cache);
  return {
    tokens: result.tokens.map((t) => [...t]),
    usage: stats.compute.map((u) => ({
      steps: u.steps,
      axes: [u.tokenKeep, u.mlpInputKeep, u.precision],
    })),
    refreshes: [...stats.refreshes],
  };
}
