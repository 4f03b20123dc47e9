import type { PreparedPolicy } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { DecoderModel } from '../decoder/decoder-model';
import { releaseCache } from '../runtime/default-cache';
import { generate } from '../runtime/generate';
import { policyContextOf } from '../runtime/policy-context';
import {
  expectAnchorsKept,
  expectValidDecision,
  expectWithinBudget,
  type FinalPositions,
  finalPositions,
  liveKeyNorms,
} from './cache-checks';
import { expectThat } from './matrix-failure';
import { type MatrixMode, modeBound, modeBudget } from './matrix-modes';

/** What one `generate()` run of an eviction policy produced. */
export interface GenerateOutcome {
  readonly tokens: number[][];
  readonly positions: FinalPositions[];
  /** The L2 norms of the live keys of every (sequence, layer, head), ascending. */
  readonly keyNorms: number[][][][];
}

/** Tokens each sequence generates in the `generate()` loops. */
export const MATRIX_NEW_TOKENS = 24;

/** Throws unless the tensor count is back to `before`. */
export function expectNoLeak(before: number, where: string): void {
  const after = tf.memory().numTensors;
  expectThat(after === before, 'no tensor leak', where, () => `${after - before} tensors left`);
}

/**
 * The `generate()` loop of an eviction policy: greedy decoding of `prompts` on `model` under the
 * policy `prepared` builds for the batch at capacity `capacity`, prompts fed one token at a time,
 * with the budget checked before every step and at the end, every round's decision and anchors
 * checked, and no tensor left behind.
 *
 * @throws PolicyMatrixFailure naming the check; Error when the provider builds no eviction policy.
 */
export async function generateLoop(
  prepared: PreparedPolicy,
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
  capacity: number,
  mode: MatrixMode,
): Promise<GenerateOutcome> {
  const where = `generate(), ${prompts.length} sequence(s)`;
  const context = policyContextOf(model, prompts.length);
  const { eviction } = prepared.build(modeBudget(mode, capacity), context);
  expectThat(eviction !== undefined, 'builds an eviction policy', where, () => 'none was built');
  const bound = modeBound(mode, capacity, eviction);
  const before = tf.memory().numTensors;
  const result = await generate({
    model,
    prompts,
    streamIds,
    maxNewTokens: MATRIX_NEW_TOKENS,
    sampling: { temperature: 0 },
    seed: 5,
    eviction,
    prefillChunk: 1,
    onStep: ({ sequences, caches }) => {
      for (const b of sequences) {
        expectWithinBudget(caches[b]!, bound, mode, `${where}, sequence ${b}, before a step`);
      }
    },
    onEvictionRound: ({ decision, observation }) => {
      expectValidDecision(decision, observation.liveCounts, `${where}, a round`);
    },
  });
  expectNoLeak(before, where);
  for (const [b, cache] of result.caches.entries()) {
    expectWithinBudget(cache, bound, mode, `${where}, sequence ${b}, at the end`);
    for (let layer = 0; layer < cache.geometry.layers; layer++) {
      if (cache.stats().evictionRounds[layer]! > 0) {
        expectAnchorsKept(cache, layer, eviction, `${where}, sequence ${b}, at the end`);
      }
    }
  }
  const positions = result.caches.map(finalPositions);
  const keyNorms = await Promise.all(result.caches.map(liveKeyNorms));
  for (const cache of result.caches) releaseCache(cache);
  return { tokens: result.tokens.map((t) => [...t]), positions, keyNorms };
}
