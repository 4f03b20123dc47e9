const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const PAD = 61; // '='
const ENCODE = new TextEncoder().encode(ALPHABET);
/** Value of each character code, 255 for a character outside the alphabet. */
const DECODE = new Uint8Array(256).fill(255);
ENCODE.forEach((code, value) => {
  DECODE[code] = value;
});

/**
 * The standard base64 of `bytes` (with `=` padding). Table-driven: the platform's `btoa` needs a
 * binary string and runs far slower on the hundreds of megabytes of a large CMA-ES state.
 */
export function toBase64(bytes: Uint8Array): string {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
  let o = 0;
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = ENCODE[n >> 18]!;
    out[o++] = ENCODE[(n >> 12) & 63]!;
    out[o++] = ENCODE[(n >> 6) & 63]!;
    out[o++] = ENCODE[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    const n = (bytes[i]! << 16) | (rest === 2 ? bytes[i + 1]! << 8 : 0);
    out[o++] = ENCODE[n >> 18]!;
    out[o++] = ENCODE[(n >> 12) & 63]!;
    out[o++] = rest === 2 ? ENCODE[(n >> 6) & 63]! : PAD;
    out[o++] = PAD;
  }
  return new TextDecoder().decode(out);
}

/**
 * The bytes of standard base64 text (`=` padding required).
 *
 * @throws Error for a length that is not a multiple of 4 or a character outside the alphabet.
 */
export function fromBase64(text: string): Uint8Array {
  const input = new TextEncoder().encode(text);
  if (input.length % 4 !== 0) throw new Error(`length ${input.length} is not a multiple of 4`);
  const padding =
    input.length === 0 ? 0 : (input.at(-1) === PAD ? 1 : 0) + (input.at(-2) === PAD ? 1 : 0);
  const out = new Uint8Array((input.length / 4) * 3 - padding);
  let o = 0;
  for (let i = 0; i < input.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const code = input[i + j]!;
      const last = i + 4 === input.length;
      const value = code === PAD && last && j >= 4 - padding ? 0 : DECODE[code]!;
      if (value === 255) throw new Error(`character ${i + j} is not base64`);
      n = (n << 6) | value;
    }
    out[o++] = n >> 16;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}
