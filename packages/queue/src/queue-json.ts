import { LetheError } from '@lethe/core';

/** The typed arrays a payload or result may hold, by constructor name. */
const TYPED = {
  Float64Array,
  Float32Array,
  Int32Array,
  Uint32Array,
  Int16Array,
  Uint16Array,
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
} as const;
type TypedName = keyof typeof TYPED;

/** A number JSON cannot write (`NaN`, `±Infinity`, `-0`), as a string that reads back. */
function specialNumber(value: number): string | undefined {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (Object.is(value, -0)) return '-0';
  return undefined;
}

/**
 * `value` as JSON-safe data that {@link decodeQueueValue} turns back into an equal value: what a
 * thread pool's structured clone carries, over a queue that stores JSON. Typed arrays become
 * `{ $typed: name, data: [...] }` and the numbers JSON cannot write (`NaN`, `±Infinity`, `-0`)
 * `{ $number: "NaN" }`; every number JSON writes reads back to the same bits, so a payload and a
 * result cross Redis unchanged. An object with a `$typed` or `$number` key of its own is refused.
 *
 * @throws LetheError `E_ARG` naming `path` (`payload.genomes[2]`, …) for what JSON cannot hold:
 *   a function, a symbol, a bigint, a `Map` or another class instance, a cycle.
 */
export function encodeQueueValue(value: unknown, path = 'value'): unknown {
  return encode(value, path, new Set());
}

/** {@link encodeQueueValue} below `path`, `seen` holding the objects above it (cycles). */
function encode(value: unknown, path: string, seen: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (value === undefined) return undefined;
  if (typeof value === 'number') {
    const special = specialNumber(value);
    return special === undefined ? value : { $number: special };
  }
  if (typeof value !== 'object') {
    throw new LetheError('E_ARG', `is a ${typeof value}, which a queued item cannot carry`, path);
  }
  if (seen.has(value)) throw new LetheError('E_ARG', 'holds itself (a cycle)', path);
  if (ArrayBuffer.isView(value)) {
    const name = value.constructor.name as TypedName;
    if (!(name in TYPED)) {
      throw new LetheError(
        'E_ARG',
        `is a ${value.constructor.name}, which a queued item cannot carry`,
        path,
      );
    }
    const data = Array.from(value as unknown as ArrayLike<number>, (x) => specialNumber(x) ?? x);
    return { $typed: name, data };
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item, i) => encode(item, `${path}[${i}]`, seen));
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      throw new LetheError(
        'E_ARG',
        `is a ${value.constructor?.name ?? 'class instance'}, which a queued item cannot carry`,
        path,
      );
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === '$typed' || key === '$number') {
        throw new LetheError(
          'E_ARG',
          `has a key "${key}", which the queue's encoding keeps for itself`,
          path,
        );
      }
      const encoded = encode(item, `${path}.${key}`, seen);
      if (encoded !== undefined) out[key] = encoded;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** The value {@link encodeQueueValue} encoded, with its typed arrays and special numbers back. */
export function decodeQueueValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decodeQueueValue);
  const record = value as Record<string, unknown>;
  if (typeof record.$number === 'string') return Number(record.$number);
  if (typeof record.$typed === 'string' && record.$typed in TYPED && Array.isArray(record.data)) {
    const Typed = TYPED[record.$typed as TypedName] as { from(data: ArrayLike<number>): unknown };
    return Typed.from((record.data as (number | string)[]).map(Number));
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) out[key] = decodeQueueValue(item);
  return out;
}
