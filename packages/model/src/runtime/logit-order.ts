/** Whether this platform stores a float64's low 32-bit word first (every engine Node runs on). */
const LOW_WORD_FIRST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The token indices ordered by logit, largest first, lower index first among equal logits —
 * the order of `indices.sort((a, b) => logits[b] - logits[a] || a - b)` (where −0 equals 0 and
 * −Infinity equals −Infinity), found without a comparator: a stable least-significant-digit
 * radix sort, one byte a pass, of each logit's negation as an order-preserving unsigned key (32
 * bits for a `Float32Array` row, whose values are all float32, else 64). The sampler orders its
 * whole vocabulary once per drawn token; this gives the comparator's order, so the same draws bit
 * for bit, in a fraction of its time (`bench/token-sampling.ts`). NaN logits must be refused
 * before (the sampler does).
 */
export function descendingLogitOrder(logits: ArrayLike<number>): Uint32Array {
  return logits instanceof Float32Array
    ? radixOrder(float32Keys(logits), 1)
    : radixOrder(float64Keys(logits), 2);
}

/** Flips an IEEE-754 word holding the sign so that unsigned order is numeric order. */
function orderedSignWord(bits: number): number {
  return bits < 0 ? ~bits : bits ^ 0x80000000;
}

/** One word a logit: the bits of its float32 negation (0 − x: exact, and −0 becomes +0), ordered. */
function float32Keys(logits: Float32Array): Int32Array {
  const negated = new Float32Array(logits.length);
  for (let i = 0; i < logits.length; i++) negated[i] = 0 - logits[i]!;
  const words = new Int32Array(negated.buffer);
  for (let i = 0; i < words.length; i++) words[i] = orderedSignWord(words[i]!);
  return words;
}

/** Two words a logit, low word first: the bits of its float64 negation, ordered. */
function float64Keys(logits: ArrayLike<number>): Int32Array {
  const n = logits.length;
  const negated = new Float64Array(n);
  for (let i = 0; i < n; i++) negated[i] = 0 - logits[i]!;
  const native = new Int32Array(negated.buffer);
  const low = LOW_WORD_FIRST ? 0 : 1;
  const words = new Int32Array(2 * n);
  for (let i = 0; i < n; i++) {
    const hi = native[2 * i + 1 - low]!;
    const lo = native[2 * i + low]!;
    words[2 * i] = hi < 0 ? ~lo : lo;
    words[2 * i + 1] = orderedSignWord(hi);
  }
  return words;
}

/**
 * Indices of the keys (`stride` words each, least significant first) in ascending unsigned order,
 * stable: all byte histograms in one pass, then one scatter pass per byte that is not the same
 * for every key.
 */
function radixOrder(words: Int32Array, stride: 1 | 2): Uint32Array {
  const n = words.length / stride;
  const bytes = 4 * stride;
  const counts = new Int32Array(bytes * 256);
  for (let i = 0; i < n; i++) {
    for (let w = 0; w < stride; w++) {
      const word = words[stride * i + w]!;
      const base = w * 1024;
      counts[base + (word & 0xff)]! += 1;
      counts[base + 256 + ((word >>> 8) & 0xff)]! += 1;
      counts[base + 512 + ((word >>> 16) & 0xff)]! += 1;
      counts[base + 768 + (word >>> 24)]! += 1;
    }
  }
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let next = new Uint32Array(n);
  for (let pass = 0; pass < bytes; pass++) {
    const w = pass >> 2;
    const shift = 8 * (pass & 3);
    const base = pass * 256;
    if (n === 0 || counts[base + ((words[w]! >>> shift) & 0xff)] === n) continue;
    let start = 0;
    for (let d = base; d < base + 256; d++) {
      const count = counts[d]!;
      counts[d] = start;
      start += count;
    }
    for (let r = 0; r < n; r++) {
      const i = order[r]!;
      const d = base + ((words[stride * i + w]! >>> shift) & 0xff);
      next[counts[d]!] = i;
      counts[d]! += 1;
    }
    const done = order;
    order = next;
    next = done;
  }
  return order;
}
