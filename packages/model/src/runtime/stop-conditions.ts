import { LetheError } from '@lethe/tensor';

/** When a sequence stops generating (besides `maxNewTokens`). */
export interface StopConditions {
  /** Token ids that end a sequence (the stop token is kept in the output). */
  readonly eosTokenIds?: readonly number[];
  /** Token sequences that end a sequence once generated (kept in the output). */
  readonly stopSequences?: readonly Int32Array[];
}

/** Why a sequence finished. `callback`: the streaming callback returned `false`. */
export type FinishReason = 'length' | 'eos' | 'stop-sequence' | 'callback';

/** Validates stop conditions against the vocabulary, throwing `E_ARG` naming the field. */
export function validateStop(stop: StopConditions, vocabSize: number): void {
  for (const id of stop.eosTokenIds ?? []) {
    if (!(Number.isInteger(id) && id >= 0 && id < vocabSize)) {
      throw new LetheError(
        'E_ARG',
        `${id} is not a token id below ${vocabSize}`,
        'stop.eosTokenIds',
      );
    }
  }
  for (const seq of stop.stopSequences ?? []) {
    if (seq.length === 0)
      throw new LetheError('E_ARG', 'stop sequences must not be empty', 'stop.stopSequences');
  }
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
