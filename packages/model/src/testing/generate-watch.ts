import { tf } from '@lethe/tensor';
import type { DecoderModel } from '../decoder/decoder-model';
import { releaseCache } from '../runtime/default-cache';
import { type GenerateOptions, type GenerationResult, generate } from '../runtime/generate';
import { expectEveryEntryKept } from './cache-checks';
import { expectThat } from './matrix-failure';

/**
 * One policy's share of a matrix `generate()` run: the policy and the hooks it adds to the run
 * (checks at every step or round), and its checks of the result, which return what it records
 * of each sequence. A policy alone runs with its watch; a composition runs with one watch per
 * part ({@link watchedGenerate}).
 */
export interface GenerateWatch<Outcome extends object> {
  /** What the watch adds to the run's options; two watches' hooks both run. */
  readonly options: Pick<
    GenerateOptions,
    'eviction' | 'compute' | 'readSelector' | 'prefillChunk' | 'onStep' | 'onEvictionRound'
  >;
  /**
   * Checks the finished run (its caches not yet released) and returns what it records.
   *
   * @throws PolicyMatrixFailure naming the check.
   */
  finish(result: GenerationResult): Outcome | Promise<Outcome>;
}

/** The outcomes of a tuple of watches, in order. */
type Outcomes<W extends readonly GenerateWatch<object>[]> = {
  -readonly [K in keyof W]: W[K] extends GenerateWatch<infer O> ? O : never;
};

/** What a watched `generate()` run decodes: greedily, `maxNewTokens` per sequence. */
export interface WatchedRun {
  readonly model: DecoderModel;
  readonly prompts: readonly Int32Array[];
  readonly streamIds: readonly number[];
  readonly maxNewTokens: number;
  /** The run, for failures: `generate(), 2 sequence(s)`. */
  readonly where: string;
}

/** The name of a matrix `generate()` run of `sequences` sequences in failures. */
export function generateWhere(sequences: number): string {
  return `generate(), ${sequences} sequence(s)`;
}

/** Throws unless the tensor count is back to `before`. */
function expectNoLeak(before: number, where: string): void {
  const after = tf.memory().numTensors;
  expectThat(after === before, 'no tensor leak', where, () => `${after - before} tensors left`);
}

/**
 * Runs `generate()` (greedy, seed 5) with every watch's policy and hooks, checks that no tensor
 * is left behind, lets each watch check the result, and releases the caches. Returns the tokens
 * and each watch's outcome, in order.
 *
 * @throws PolicyMatrixFailure naming the broken check.
 */
export async function watchedGenerate<const W extends readonly GenerateWatch<object>[]>(
  run: WatchedRun,
  watches: W,
): Promise<{ tokens: number[][]; outcomes: Outcomes<W> }> {
  const options = watches.map((watch) => watch.options);
  const onStep = options.flatMap((o) => (o.onStep === undefined ? [] : [o.onStep]));
  const onRound = options.flatMap((o) =>
    o.onEvictionRound === undefined ? [] : [o.onEvictionRound],
  );
  const before = tf.memory().numTensors;
  const result = await generate({
    ...(Object.assign({}, ...options) as GenerateWatch<object>['options']),
    model: run.model,
    prompts: run.prompts,
    streamIds: run.streamIds,
    maxNewTokens: run.maxNewTokens,
    sampling: { temperature: 0 },
    seed: 5,
    ...(onStep.length === 0 ? {} : { onStep: (event) => onStep.forEach((hook) => hook(event)) }),
    ...(onRound.length === 0
      ? {}
      : { onEvictionRound: (event) => onRound.forEach((hook) => hook(event)) }),
  });
  try {
    expectNoLeak(before, run.where);
    const outcomes = [];
    for (const watch of watches) outcomes.push(await watch.finish(result));
    return { tokens: result.tokens.map((t) => [...t]), outcomes: outcomes as Outcomes<W> };
  } finally {
    for (const cache of result.caches) releaseCache(cache);
  }
}

/**
 * The watch of a run without an eviction policy: every sequence's cache keeps every token fed to
 * it (its prompt and every generated token but the last).
 */
export function everyEntryKeptWatch(
  prompts: readonly Int32Array[],
  where: string,
): GenerateWatch<object> {
  return {
    options: {},
    finish(result) {
      for (const [b, cache] of result.caches.entries()) {
        const fed = prompts[b]!.length + result.tokens[b]!.length - 1;
        expectEveryEntryKept(cache, fed, `${where}, sequence ${b}`);
      }
      return {};
    },
  };
}
