import { LetheError } from '@lethe/tensor';
import { expect } from 'vitest';

/** Bytes of a safetensors file from a header string (8-byte LE length written here) and data. */
export function fileBytes(header: string, data: ArrayLike<number> = []): Uint8Array {
  const json = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + json.length + data.length);
  let n = json.length;
  for (let i = 0; i < 8; i++) {
    out[i] = n % 256;
    n = Math.floor(n / 256);
  }
  out.set(json, 8);
  out.set(Array.from(data), 8 + json.length);
  return out;
}

/** Asserts that `fn` throws a LetheError with `code` (and `argument`, when given). */
export function expectLetheError(fn: () => unknown, code: string, argument?: string): LetheError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(LetheError);
  const error = caught as LetheError;
  expect(error.code).toBe(code);
  if (argument !== undefined) expect(error.argument).toBe(argument);
  return error;
}

/** Same as {@link expectLetheError} for a promise. */
export async function expectLetheRejection(
  promise: Promise<unknown>,
  code: string,
  argument?: string,
): Promise<LetheError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return expectLetheError(
    () => {
      if (error !== undefined) throw error;
    },
    code,
    argument,
  );
}

/** The bytes behind a typed array (for bit-exact comparisons, NaN payloads included). */
export function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}
