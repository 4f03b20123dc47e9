/**
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
 * counter-based generator. Output block i is a pure function of (key, counter i), so any
 * position of a stream can be produced independently and identically on every backend.
 */

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;

/** High 32 bits of the 64-bit product of two unsigned 32-bit integers. */
function mulHi(a: number, b: number): number {
  const aL = a & 0xffff;
  const aH = a >>> 16;
  const bL = b & 0xffff;
  const bH = b >>> 16;
  const ll = aL * bL;
  const lh = aL * bH;
  const hl = aH * bL;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (aH * bH + (lh >>> 16) + (hl >>> 16) + (mid >>> 16)) >>> 0;
}

/**
 * Computes one Philox4x32-10 block into `out[offset .. offset+3]`.
 *
 * @param c0 first of the four 32-bit counter words `c0 … c3`
 * @param k0 first key word
 * @param k1 second key word
 * @param out receives the four output words
 * @param offset where in `out` the block starts (default 0)
 */
export function philox4x32(
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  k0: number,
  k1: number,
  out: Uint32Array,
  offset = 0,
): void {
  for (let round = 0; round < 10; round++) {
    const hi0 = mulHi(M0, c0);
    const lo0 = Math.imul(M0, c0) >>> 0;
    const hi1 = mulHi(M1, c2);
    const lo1 = Math.imul(M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
    k0 = (k0 + W0) >>> 0;
    k1 = (k1 + W1) >>> 0;
  }
  out[offset] = c0;
  out[offset + 1] = c1;
  out[offset + 2] = c2;
  out[offset + 3] = c3;
}
