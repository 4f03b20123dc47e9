import { LetheError } from '@lethe/core';
import type { KVCacheStore } from '@lethe/kv-cache';

/** Names of the function-valued members of `T`. */
type MethodNames<T> = {
  [K in keyof T]-?: T[K] extends (...args: never[]) => unknown ? K : never;
}[keyof T];

/** Every method of {@link KVCacheStore} (the compiler rejects a missing or extra name). */
const METHODS = Object.keys({
  length: true,
  liveCounts: true,
  append: true,
  recordQueries: true,
  view: true,
  gather: true,
  pageKeyBounds: true,
  observe: true,
  keep: true,
  truncate: true,
  stats: true,
} satisfies Record<MethodNames<KVCacheStore>, true>);

/** The positive-integer fields of `KVCacheStore.geometry`. */
const GEOMETRY_FIELDS = ['layers', 'kvHeads', 'headDim', 'pageSize'] as const;

/** The boolean flags of {@link KVCacheStore}. */
const FLAGS = ['storeValues', 'storeGates', 'trackAttention'] as const;

function isPositiveInteger(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) > 0;
}

/**
 * Structural check that `cache` implements {@link KVCacheStore} — any object does, not only a
 * `KVCache`: every method is a function, `geometry` holds positive integer `layers`, `kvHeads`,
 * `headDim` and `pageSize`, `queryHeads` is a positive integer, `queryWindow` a non-negative
 * integer, the flags are booleans and `anchors` is an object.
 *
 * @throws LetheError `E_ARG` naming `argument` (e.g. `caches[1]`), the message naming the
 *   missing or malformed member.
 */
export function checkCacheStore(cache: unknown, argument: string): asserts cache is KVCacheStore {
  function fail(member: string, expected: string): never {
    throw new LetheError(
      'E_ARG',
      `does not implement KVCacheStore: ${member} must be ${expected}`,
      argument,
    );
  }
  if (typeof cache !== 'object' || cache === null) fail('the cache', 'an object');
  const store = cache as Record<string, unknown>;
  for (const name of METHODS) {
    if (typeof store[name] !== 'function') fail(`${name}()`, 'a method');
  }
  const geometry = store.geometry as Record<string, unknown> | null | undefined;
  if (typeof geometry !== 'object' || geometry === null) fail('geometry', 'an object');
  for (const field of GEOMETRY_FIELDS) {
    if (!isPositiveInteger(geometry[field])) fail(`geometry.${field}`, 'a positive integer');
  }
  if (!isPositiveInteger(store.queryHeads)) fail('queryHeads', 'a positive integer');
  if (!(Number.isInteger(store.queryWindow) && (store.queryWindow as number) >= 0)) {
    fail('queryWindow', 'a non-negative integer');
  }
  for (const flag of FLAGS) {
    if (typeof store[flag] !== 'boolean') fail(flag, 'a boolean');
  }
  if (typeof store.anchors !== 'object' || store.anchors === null) fail('anchors', 'an object');
}
