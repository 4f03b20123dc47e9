import { LetheError } from '@lethe/core';
import { checkTokenIds } from '../decoder/forward-checks';
import { checkObject } from '../option-checks';

/** When a sequence stops generating (besides `maxNewTokens`). */
export interface StopConditions {
  /** Token ids that end a sequence (the stop token is kept in the output). */
  readonly eosTokenIds?: readonly number[];
  /** Token sequences that end a sequence once generated (kept in the output). */
  readonly stopSequences?: readonly (Int32Array | readonly number[])[];
}

/** Why a sequence finished. `callback`: the streaming callback returned `false`. */
export type FinishReason = 'length' | 'eos' | 'stop-sequence' | 'callback';

/**
 * Validates stop conditions against the vocabulary.
 *
 * @throws LetheError `E_ARG` naming `stop` when it is not an object, `stop.eosTokenIds` when it
 *   is not an array of token ids below `vocabSize`, `stop.stopSequences` when it is not an
 *   array, or `stop.stopSequences[i]` when a sequence is not a non-empty `Int32Array` or array of
 *   such ids.
 */
export function validateStop(stop: StopConditions, vocabSize: number): void {
  checkObject(stop, 'stop');
  const eos = stop.eosTokenIds as unknown;
  if (eos !== undefined && !Array.isArray(eos)) {
    throw new LetheError('E_ARG', 'must be an array of token ids', 'stop.eosTokenIds');
  }
  for (const id of stop.eosTokenIds ?? []) {
    if (!(Number.isInteger(id) && id >= 0 && id < vocabSize)) {
      throw new LetheError(
        'E_ARG',
        `${id} is not a token id below ${vocabSize}`,
        'stop.eosTokenIds',
      );
    }
  }
  const sequences = stop.stopSequences as unknown;
  if (sequences !== undefined && !Array.isArray(sequences)) {
    throw new LetheError('E_ARG', 'must be an array of token sequences', 'stop.stopSequences');
  }
  (stop.stopSequences ?? []).forEach((seq: unknown, i) => {
    const argument = `stop.stopSequences[${i}]`;
    if (!(seq instanceof Int32Array || Array.isArray(seq)) || seq.length === 0) {
      throw new LetheError(
        'E_ARG',
        'must be a non-empty Int32Array or array of token ids',
        argument,
      );
    }
    checkTokenIds(seq, vocabSize, argument);
  });
}

/** The reason `generated` (tokens so far, the newest last) must stop now, or undefined. */
export function stopReason(
  generated: readonly number[],
  stop: StopConditions,
): FinishReason | undefined {
  const last = generated[generated.length - 1];
  if (last !== undefined && stop.eosTokenIds?.includes(last)) return 'eos';
  for (const seq of stop.stopSequences ?? []) {
    if (seq.length > generated.length) continue;
    const offset = generated.length - seq.length;
    let match = true;
    for (let i = 0; i < seq.length && match; i++) match = generated[offset + i] === seq[i];
    if (match) return 'stop-sequence';
  }
  return undefined;
}
