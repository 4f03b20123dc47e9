import { Rng } from '@lethe/core';
import type { ComputePolicy, LayerControls, PolicySet, PreparedPolicy } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/decoder-model';
import { policyContextOf } from '../runtime/policy-context';
import {
  everyEntryKeptWatch,
  type GenerateWatch,
  generateWhere,
  watchedGenerate,
} from './generate-watch';
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

/** `policy` with every step's controls checked (see `expectValidControls`) as it returns them. */
function checkedControls(policy: ComputePolicy, layers: number, where: string): ComputePolicy {
  const { name, needs, axes, refreshEvery } = policy;
  return {
    name,
    needs,
    axes,
    refreshEvery,
    ...(policy.createState === undefined ? {} : { createState: () => policy.createState!() }),
    controls(observation, rng, state) {
      const controls = policy.controls(observation, rng, state);
      expectValidControls(controls, layers, `${where}, step ${observation.step}`);
      return controls;
    },
  };
}

/**
 * The watch of a compute policy (`set.compute`) on `model`: every step's controls checked (one
 * entry per layer, each knob in its range), and at the end each sequence's realised averages in
 * [0, 1] over every decode step and one KV refresh per `refreshEvery` decode steps. Records each
 * sequence's realised averages and refreshes.
 *
 * @throws PolicyMatrixFailure when the set has no compute policy.
 */
export function computeWatch(
  set: PolicySet,
  model: DecoderModel,
  where: string,
): GenerateWatch<Omit<ComputeOutcome, 'tokens'>> {
  const { compute } = set;
  expectThat(compute !== undefined, 'builds a compute policy', where, () => 'none was built');
  const layers = model.config.num_hidden_layers;
  return {
    options: { compute: checkedControls(compute, layers, where) },
    finish(result) {
      const { stats } = result;
      for (const [b, tokens] of result.tokens.entries()) {
        const at = `${where}, sequence ${b}`;
        const decodeSteps = tokens.length - 1;
        const usage = stats.compute[b]!;
        expectSame(usage.steps, decodeSteps, 'realised compute over every decode step', at);
        for (const axis of [usage.tokenKeep, usage.mlpInputKeep, usage.precision]) {
          expectThat(axis >= 0 && axis <= 1, 'realised averages in [0, 1]', at, () => `${axis}`);
        }
        const every = compute.refreshEvery;
        const refreshes = every === undefined ? 0 : Math.floor(decodeSteps / every);
        expectSame(stats.refreshes[b], refreshes, 'one KV refresh per episode', at);
      }
      return {
        usage: stats.compute.map((u) => ({
          steps: u.steps,
          axes: [u.tokenKeep, u.mlpInputKeep, u.precision],
        })),
        refreshes: [...stats.refreshes],
      };
    },
  };
}

/**
 * Checks that a compute policy's run asked for less than dense compute somewhere: some sequence's
 * realised average below 1 on some axis.
 *
 * @throws PolicyMatrixFailure naming the check.
 */
export function expectSparseCompute(outcome: Pick<ComputeOutcome, 'usage'>, where: string): void {
  expectThat(
    outcome.usage.some(({ axes }) => axes.some((axis) => axis < 1)),
    'asks for less than dense compute somewhere',
    where,
    () => `realised averages ${JSON.stringify(outcome.usage.map(({ axes }) => axes))}`,
  );
}

/**
 * The `generate()` loop of a compute policy: greedy decoding of `prompts` on `model` under the
 * compute policy built for the batch. Checks: no tensor left behind, every step's controls valid,
 * the cache keeps every entry (a compute policy evicts nothing), the realised averages in [0, 1]
 * over every decode step, and one KV refresh per `refreshEvery` decode steps.
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
  const where = generateWhere(prompts.length);
  const set = prepared.build(modeBudget(mode, 2), policyContextOf(model, prompts.length));
  const watch = computeWatch(set, model, where);
  expectThat(
    set.eviction === undefined,
    'a compute policy evicts nothing',
    where,
    () => 'it built an eviction policy',
  );
  const watches = [watch, everyEntryKeptWatch(prompts, where)] as const;
  const run = { model, prompts, streamIds, maxNewTokens: 20, where };
  const { tokens, outcomes } = await watchedGenerate(run, watches);
  return { tokens, ...outcomes[0] };
}
