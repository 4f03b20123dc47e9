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

/** The bytes behind a typed array (for bit-exact comparisons, NaN payloads included). */
export function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}
