import type { ComposedPolicy } from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/decoder-model';
import { policyContextOf } from '../runtime/policy-context';
import { type ComputeOutcome, computeWatch } from './compute-loops';
import {
  evictionWatch,
  GENERATE_CAPACITY,
  type GenerateOutcome,
  MATRIX_NEW_TOKENS,
} from './generate-loop';
import {
  everyEntryKeptWatch,
  type GenerateWatch,
  generateWhere,
  watchedGenerate,
} from './generate-watch';
import { type MatrixMode, modeBudget, modeKind } from './matrix-modes';
import { type ReadOutcome, readWatch } from './read-loops';

/**
 * What one `generate()` run of a composition produced: the tokens, and what each part's own
 * loop records — the eviction part's live positions and key norms, the compute part's realised
 * compute and refreshes, the read part's reads — present for the kinds the composition has.
 */
export type ComposedOutcome = Pick<GenerateOutcome, 'tokens'> &
  Partial<Omit<GenerateOutcome, 'tokens'>> &
  Partial<Omit<ComputeOutcome, 'tokens'>> &
  Partial<Omit<ReadOutcome, 'tokens'>>;

/**
 * The `generate()` loop of a composition: greedy decoding of `prompts` on `model` under the set
 * `composed` builds for the batch, part `i` under `modes[i]`'s budget (an eviction part at
 * capacity 8, a compute part at its targets, a read part at its read budget). Every part is
 * checked as its own loop checks it, in the same run: the eviction part's budget before every
 * step and at the end, its decisions and anchors; the compute part's controls at every step, its
 * realised averages and refreshes; the read part's reads at every decode step — and without an
 * eviction part, that the cache keeps every entry; no tensor is left behind.
 *
 * @throws PolicyMatrixFailure naming the check, also when a part builds nothing for its kind;
 *   the errors of `composed.build` (a composition the runtime cannot run: `E_ARG`).
 */
export async function composedGenerateLoop(
  composed: ComposedPolicy,
  modes: readonly MatrixMode[],
  model: DecoderModel,
  prompts: readonly Int32Array[],
  streamIds: readonly number[],
): Promise<ComposedOutcome> {
  const where = generateWhere(prompts.length);
  const budgets = modes.map((mode) => modeBudget(mode, GENERATE_CAPACITY));
  const set = composed.build(budgets, policyContextOf(model, prompts.length));
  const watches: GenerateWatch<object>[] = modes.map((mode) => {
    const kind = modeKind(mode);
    if (kind === 'compute') return computeWatch(set, model, where);
    if (kind === 'read') return readWatch(set, mode, prompts.length, where);
    return evictionWatch(set, GENERATE_CAPACITY, mode, where);
  });
  if (!modes.some((mode) => modeKind(mode) === 'eviction')) {
    watches.push(everyEntryKeptWatch(prompts, where));
  }
  const run = { model, prompts, streamIds, maxNewTokens: MATRIX_NEW_TOKENS, where };
  const { tokens, outcomes } = await watchedGenerate(run, watches);
  return Object.assign({ tokens }, ...outcomes);
}
