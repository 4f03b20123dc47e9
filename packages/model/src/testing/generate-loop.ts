import type { PolicySet, PreparedPolicy } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/decoder-model';
import { policyContextOf } from '../runtime/policy-context';
import {
  expectAnchorsKept,
  expectValidDecision,
  expectWithinBudget,
  type FinalPositions,
  finalPositions,
  liveKeyNorms,
} from './cache-checks';
import { type GenerateWatch, generateWhere, watchedGenerate } from './generate-watch';
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

/** Capacity of the eviction policies in the `generate()` loops (prompts of 9–13 + 24 tokens). */
export const GENERATE_CAPACITY = 8;

/**
 * The watch of an eviction policy (`set.eviction`, built under `mode`'s budget at `capacity`):
 * prompts fed one token at a time, the budget checked before every step and at the end, every
 * round's decision checked, and at the end the anchors of every layer that ran a round. Records
 * each sequence's live positions and live keys' norms.
 *
 * @throws PolicyMatrixFailure when the set has no eviction policy.
 */
export function evictionWatch(
  set: PolicySet,
  capacity: number,
  mode: MatrixMode,
  where: string,
): GenerateWatch<Omit<GenerateOutcome, 'tokens'>> {
  const { eviction } = set;
  expectThat(eviction !== undefined, 'builds an eviction policy', where, () => 'none was built');
  const bound = modeBound(mode, capacity, eviction);
  return {
    options: {
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
    },
    async finish(result) {
      for (const [b, cache] of result.caches.entries()) {
        expectWithinBudget(cache, bound, mode, `${where}, sequence ${b}, at the end`);
        for (let layer = 0; layer < cache.geometry.layers; layer++) {
          if (cache.stats().evictionRounds[layer]! > 0) {
            expectAnchorsKept(cache, layer, eviction, `${where}, sequence ${b}, at the end`);
          }
        }
      }
      return {
        positions: result.caches.map(finalPositions),
        keyNorms: await Promise.all(result.caches.map(liveKeyNorms)),
      };
    },
  };
}

/**
 * Checks that an eviction policy evicted in every sequence of a run of `prompts`: some head
 * holds fewer entries than the tokens fed to it (its prompt and every generated token but the
 * last).
 *
 * @throws PolicyMatrixFailure naming the check.
 */
export function expectEvicted(
  outcome: Pick<GenerateOutcome, 'tokens' | 'positions'>,
  prompts: readonly Int32Array[],
  where: string,
): void {
  for (const [b, layers] of outcome.positions.entries()) {
    const fed = prompts[b]!.length + outcome.tokens[b]!.length - 1;
    const held = layers.flat().map((head) => head.length);
    expectThat(
      held.some((n) => n < fed),
      'evicts',
      `${where}, sequence ${b}`,
      () => `heads hold [${held}] of ${fed} tokens`,
    );
  }
}

/**
 * The `generate()` loop of an eviction policy: greedy decoding of `prompts` on `model` under the
 * policy `prepared` builds for the batch at capacity `capacity`, prompts fed one token at a time,
 * with the budget checked before every step and at the end, every round's decision and anchors
 * checked, and no tensor left behind.
 *
 * @throws PolicyMatrixFailure naming the check, also when the provider builds no eviction policy.
 */
export async function generateLoop(
  prepared: PreparedPolicy,
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
  capacity: number,
  mode: MatrixMode,
): Promise<GenerateOutcome> {
  const where = generateWhere(prompts.length);
  const set = prepared.build(modeBudget(mode, capacity), policyContextOf(model, prompts.length));
  const watch = evictionWatch(set, capacity, mode, where);
  const run = { model, prompts, streamIds, maxNewTokens: MATRIX_NEW_TOKENS, where };
  const { tokens, outcomes } = await watchedGenerate(run, [watch]);
  return { tokens, ...outcomes[0] };
}
