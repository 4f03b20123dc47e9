import { LetheError } from '@lethe/core';
import { checkMethods, checkObject, checkOptionalFunction } from '../option-checks';
import { checkPolicies } from './policy-checks';
import type { SessionOptions } from './session';

/**
 * Validates what {@link GenerationSession} takes from its options before it keeps any of them:
 * an options object; a model (an object with a `config` and `prefill` / `decodeStep` methods);
 * policies that implement their interfaces (`eviction`: `shouldEvict`, `select`, a `needs`
 * object and, when given, a `gate` with `logGates`; `compute`: `controls`); callbacks that are functions; `streamIds` as an array of
 * non-negative safe integers; a compute policy's `refreshEvery` as a positive integer, alone
 * (see {@link checkPolicies}). `readSelector`, `pageSize` and `prefillChunk` are checked by the
 * session itself.
 *
 * @throws LetheError `E_ARG` naming `options` or the bad field.
 */
export function checkSessionOptions(options: SessionOptions): void {
  checkObject(options, 'options');
  const model = options.model as unknown;
  checkMethods(model, ['prefill', 'decodeStep'], 'model', 'a DecoderModel');
  checkObject((model as { config: unknown }).config, 'model.config');
  checkPolicies(options, '');
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
