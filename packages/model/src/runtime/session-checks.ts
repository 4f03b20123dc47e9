import { assertInteger, LetheError } from '@lethe/tensor';
import { checkMethods, checkObject, checkOptionalFunction } from '../option-checks';
import type { SessionOptions } from './session';

/**
 * Validates what {@link GenerationSession} takes from its options before it keeps any of them:
 * an options object; a model (an object with a `config` and `prefill` / `decodeStep` methods);
 * policies that implement their interfaces (`eviction`: `shouldEvict`, `select`, a `needs`
 * object and, when given, a `gate` with `logGates`; `compute`: `controls`); callbacks that are functions; `streamIds` as an array of
 * non-negative safe integers; a compute policy's `refreshEvery` as a positive integer, alone
 * (see {@link checkRefresh}). `readSelector`, `pageSize` and `prefillChunk` are checked by the
 * session itself.
 *
 * @throws LetheError `E_ARG` naming `options` or the bad field.
 */
export function checkSessionOptions(options: SessionOptions): void {
  checkObject(options, 'options');
  const model = options.model as unknown;
  checkMethods(model, ['prefill', 'decodeStep'], 'model', 'a DecoderModel');
  checkObject((model as { config: unknown }).config, 'model.config');
  if (options.eviction !== undefined) {
    checkMethods(options.eviction, ['shouldEvict', 'select'], 'eviction', 'an EvictionPolicy');
    checkObject(options.eviction.needs, 'eviction.needs', 'an ObservationNeeds object');
    const chunk = options.eviction.prefillChunk;
    if (chunk !== undefined) assertInteger(chunk, 'eviction.prefillChunk', 1);
    const gate = options.eviction.gate as unknown;
    if (gate !== undefined) checkMethods(gate, ['logGates'], 'eviction.gate', 'an AttentionGate');
  }
  if (options.compute !== undefined) {
    checkMethods(options.compute, ['controls'], 'compute', 'a ComputePolicy');
    checkRefresh(options);
  }
  checkOptionalFunction(options.createCache, 'createCache');
  checkOptionalFunction(options.onPrefillChunk, 'onPrefillChunk');
  checkOptionalFunction(options.onEvictionRound, 'onEvictionRound');
  const ids = options.streamIds as unknown;
  if (ids !== undefined) {
    if (!Array.isArray(ids)) {
      throw new LetheError('E_ARG', 'must be an array of stream ids', 'streamIds');
    }
    ids.forEach((id, b) => {
      if (!(Number.isSafeInteger(id) && id >= 0)) {
        throw new LetheError(
          'E_ARG',
          `must be a non-negative integer, got ${id}`,
          `streamIds[${b}]`,
        );
      }
    });
  }
}

/**
 * Checks the compute policy's `refreshEvery` (SOL's KV refresh): undefined, or a positive
 * integer in a session without an eviction policy or a read selector. Why alone: the refresh
 * truncates the cache and prefills the last `T` tokens again, which an eviction policy would
 * contradict (a round that evicted one of those tokens would see it come back, its round counters
 * and per-sequence state would describe a cache that no longer exists, and H2O-style accumulated
 * attention cannot be truncated), and a read selector's needs (accumulated attention, recorded
 * queries) would have to be rebuilt the same way; a combination is refused instead of being run
 * with semantics nobody specified.
 *
 * @throws LetheError `E_ARG` naming `compute.refreshEvery`.
 */
function checkRefresh(options: SessionOptions): void {
  const every = options.compute!.refreshEvery;
  if (every === undefined) return;
  if (!(typeof every === 'number' && Number.isInteger(every) && every >= 1)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer (decode steps per episode), got ${String(every)}`,
      'compute.refreshEvery',
    );
  }
  if (options.eviction !== undefined) {
    throw new LetheError(
      'E_ARG',
      'cannot be combined with an eviction policy: the refresh re-prefills tokens a round may have evicted',
      'compute.refreshEvery',
    );
  }
  if (options.readSelector !== undefined) {
    throw new LetheError(
      'E_ARG',
      'cannot be combined with a read selector: its cache needs cannot be refreshed',
      'compute.refreshEvery',
    );
  }
}
