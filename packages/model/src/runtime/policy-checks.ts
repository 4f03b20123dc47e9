import { assertInteger, LetheError } from '@lethe/core';
import { checkMethods, checkObject } from '../option-checks';
import type { SequencePolicies } from './sequence-state';

/**
 * Validates a sequence's eviction and compute policies before a runtime keeps them: an eviction
 * policy implements its interface (`shouldEvict`, `select`, a `needs` object, a positive integer
 * `prefillChunk` when given, and a `gate` with `logGates` when given); a compute policy has
 * `controls` and, when given, `refreshEvery` as a positive integer, alone (see
 * {@link checkRefresh}); a `ceiling` is an integer ≥ 2 and comes with an eviction policy. The
 * read selector is checked by `checkReadSelector`.
 *
 * @param prefix prepended to every argument name: `''` for a session's options, `'policies.'` for
 *   a batched request's.
 * @throws LetheError `E_ARG` naming the bad policy or field (`eviction`, `eviction.needs`,
 *   `eviction.prefillChunk`, `eviction.gate`, `compute`, `compute.refreshEvery`, `ceiling`, after
 *   `prefix`).
 */
export function checkPolicies(policies: SequencePolicies, prefix: string): void {
  const { eviction, compute, ceiling } = policies;
  if (ceiling !== undefined) {
    assertInteger(ceiling, `${prefix}ceiling`, 2);
    if (eviction === undefined) {
      throw new LetheError(
        'E_ARG',
        'needs an eviction policy: without one nothing holds the cache to it',
        `${prefix}ceiling`,
      );
    }
  }
  if (eviction !== undefined) {
    checkMethods(eviction, ['shouldEvict', 'select'], `${prefix}eviction`, 'an EvictionPolicy');
    checkObject(eviction.needs, `${prefix}eviction.needs`, 'an ObservationNeeds object');
    const chunk = eviction.prefillChunk;
    if (chunk !== undefined) assertInteger(chunk, `${prefix}eviction.prefillChunk`, 1);
    const gate = eviction.gate as unknown;
    if (gate !== undefined) {
      checkMethods(gate, ['logGates'], `${prefix}eviction.gate`, 'an AttentionGate');
    }
  }
  if (compute !== undefined) {
    checkMethods(compute, ['controls'], `${prefix}compute`, 'a ComputePolicy');
    checkRefresh(policies, prefix);
  }
}

/**
 * Checks the compute policy's `refreshEvery` (SOL's KV refresh): undefined, or a positive
 * integer without an eviction policy or a read selector. Why alone: the refresh truncates the
 * cache and prefills the last `T` tokens again, which an eviction policy would contradict (a
 * round that evicted one of those tokens would see it come back, its round counters and
 * per-sequence state would describe a cache that no longer exists, and H2O-style accumulated
 * attention cannot be truncated), and a read selector's needs (accumulated attention, recorded
 * queries) would have to be rebuilt the same way; a combination is refused instead of being run
 * with semantics nobody specified.
 *
 * @throws LetheError `E_ARG` naming `compute.refreshEvery` (after `prefix`).
 */
function checkRefresh(policies: SequencePolicies, prefix: string): void {
  const every = policies.compute!.refreshEvery;
  if (every === undefined) return;
  const argument = `${prefix}compute.refreshEvery`;
  if (!(typeof every === 'number' && Number.isInteger(every) && every >= 1)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer (decode steps per episode), got ${String(every)}`,
      argument,
    );
  }
  if (policies.eviction !== undefined) {
    throw new LetheError(
      'E_ARG',
      'cannot be combined with an eviction policy: the refresh re-prefills tokens a round may have evicted',
      argument,
    );
  }
  if (policies.readSelector !== undefined) {
    throw new LetheError(
      'E_ARG',
      'cannot be combined with a read selector: its cache needs cannot be refreshed',
      argument,
    );
  }
}
