import { expectSame } from './matrix-failure';
import { matrixPrompts } from './matrix-model';
import type { ProviderKind } from './matrix-modes';

/**
 * What each kind's `generate()` loop records of a sequence that must be the same alone as in the
 * batch (besides the tokens): an outcome's per-sequence field and the check's wording.
 */
export const COMPARED_ALONE: Readonly<Record<ProviderKind, Readonly<Record<string, string>>>> = {
  eviction: { positions: 'the same entries as in the batch' },
  compute: {
    usage: 'the same realised compute as in the batch',
    refreshes: 'the same refreshes as in the batch',
  },
  read: { reads: 'the same reads as in the batch' },
};

/** A `generate()` loop of the matrix: greedy decoding of `prompts` with stream ids `streamIds`. */
export type MatrixGenerate<Outcome> = (
  prompts: Int32Array[],
  streamIds: number[],
) => Promise<Outcome>;

/**
 * Runs `loop` on the matrix's two prompts as a batch, again, and each prompt alone (with its
 * stream id in the batch). Checks that the same seed gives the same result, and that each
 * sequence alone produces the same tokens as in the batch and the same value of every field
 * `compared` names (a per-sequence array of the outcome) with the check's wording. Returns the
 * batch's outcome.
 *
 * @throws PolicyMatrixFailure naming the check and the sequence; Error when a compared field is
 *   not an array of the outcome.
 */
export async function expectBatchIsolation<Outcome extends { readonly tokens: number[][] }>(
  loop: MatrixGenerate<Outcome>,
  compared: Readonly<Record<string, string>>,
): Promise<Outcome> {
  const prompts = matrixPrompts();
  const batch = await loop(prompts, [0, 1]);
  expectSame(await loop(prompts, [0, 1]), batch, 'same seed, same result', 'generate()');
  const checks = Object.entries({ tokens: 'the same tokens as in the batch', ...compared });
  for (const b of [0, 1]) {
    const alone = await loop([prompts[b]!], [b]);
    const where = `generate(), sequence ${b} alone`;
    for (const [field, check] of checks) {
      expectSame(sequence(alone, field, 0), sequence(batch, field, b), check, where);
    }
  }
  return batch;
}

/** Sequence `b`'s entry of the per-sequence array `outcome[field]`. */
function sequence(outcome: object, field: string, b: number): unknown {
  const entries = (outcome as Record<string, unknown>)[field];
  if (!Array.isArray(entries)) throw new Error(`the outcome has no per-sequence field "${field}"`);
  return entries[b];
}
