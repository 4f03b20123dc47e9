import { LetheError } from '@lethe/core';

/** A JSON value: what survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** Whether `value` is a plain object (not null, not an array, prototype Object or null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Checks that `value` is a JSON value (finite numbers, strings, booleans, null, arrays and plain
 * objects of those), so that it round-trips through a results file unchanged.
 *
 * @throws LetheError `E_ARG` naming the offending path below `argument` (e.g. `tasks[0].options.size`).
 */
export function assertJson(value: unknown, argument: string): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new LetheError('E_ARG', `must be a finite number, got ${value}`, argument);
    }
    return value;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      assertJson(item, `${argument}[${i}]`);
    });
    return value as JsonValue[];
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) assertJson(item, `${argument}.${key}`);
    return value as { [key: string]: JsonValue };
  }
  throw new LetheError('E_ARG', `must be a JSON value, got ${typeof value}`, argument);
}

/** JSON text of `value` with object keys sorted at every level, for order-independent comparison. */
export function canonicalJson(value: JsonValue): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, JsonValue>)[key]!);
    }
    return out;
  }
  return value;
}

/**
 * The JSON value of a command-line flag, or undefined when the flag was not given.
 *
 * @throws LetheError `E_ARG` naming `flag` when `text` is not JSON.
 */
export function parseJsonFlag(text: string | undefined, flag: string): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LetheError('E_ARG', `must be JSON: ${(error as Error).message}`, flag);
  }
}
