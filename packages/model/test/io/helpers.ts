/** The bytes behind a typed array (for bit-exact comparisons, NaN payloads included). */
export function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}
