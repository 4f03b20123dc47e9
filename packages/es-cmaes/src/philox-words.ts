const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9 | 0;
const W1 = 0xbb67ae85 | 0;
const TWO_POW_32 = 4294967296;
/** Blocks computed per refill at most: 4 KiB of words. */
const MAX_BLOCKS = 256;

/** High 32 bits of the 64-bit product of two 32-bit words (read as unsigned), as an int32. */
function mulHi(a: number, b: number): number {
  const aL = a & 0xffff;
  const aH = a >>> 16;
  const bL = b & 0xffff;
  const bH = b >>> 16;
  const ll = aL * bL;
  const lh = aL * bH;
  const hl = aH * bL;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (aH * bH + (lh >>> 16) + (hl >>> 16) + (mid >>> 16)) | 0;
}

/**
 * The 32-bit words of `@lethe/core`'s Philox4x32-10 stream, computed many blocks at a time:
 * block i is `philox4x32(i mod 2³², ⌊i / 2³²⌋, 0, 0, k0, k1)` and its four words follow each
 * other in order. The rounds are core's `philox4x32`, kept in int32 arithmetic throughout (no
 * unsigned conversions between rounds), which is what makes the bulk draws of a generation
 * cheap; a test checks the words against core's function.
 *
 * Words are buffered: `buffer[position .. end)` are the next words of the stream. A caller
 * that reads them directly (a hot loop keeps the cursor in a local) advances
 * {@link PhiloxWords.position} and calls {@link PhiloxWords.refill} when they run out;
 * {@link PhiloxWords.next} does both for one word. {@link PhiloxWords.counter} is the stream
 * position only after {@link PhiloxWords.flush}, which drops the buffered words not yet read.
 */
export class PhiloxWords {
  /** The computed words; the next ones are at `position .. end − 1`. */
  readonly buffer = new Int32Array(4 * MAX_BLOCKS);
  /** Index in `buffer` of the next word. */
  position = 0;
  private ready = 0;
  private expected = 0;

  /**
   * @param k0 first key word (unsigned 32-bit)
   * @param k1 second key word
   * @param nextBlock the counter of the first block to draw (a non-negative safe integer)
   */
  constructor(
    private readonly k0: number,
    private readonly k1: number,
    private nextBlock: number,
  ) {}

  /** The counter of the next block not yet computed: the stream position after a flush. */
  get counter(): number {
    return this.nextBlock;
  }

  /** The end of the computed words in `buffer`. */
  get end(): number {
    return this.ready;
  }

  /**
   * Announces that at least `words` words will be read before the next flush, so that refills
   * compute as many blocks as that needs (at most 256 at a time) rather than a fixed batch that
   * the flush would mostly drop. With no more announced than is read, the words and the counter
   * after the flush are those of reading one block at a time: ⌈words read / 4⌉ blocks.
   */
  expect(words: number): void {
    this.expected = words;
  }

  /** The next word, as an int32 (`>>> 0` reads it unsigned). */
  next(): number {
    if (this.position === this.ready) this.refill();
    return this.buffer[this.position++]!;
  }

  /** Drops the words not yet read: the stream continues at the next whole block. */
  flush(): void {
    this.position = 0;
    this.ready = 0;
    this.expected = 0;
  }

  /**
   * Computes the next blocks into `buffer` from index 0 (call it once every buffered word is
   * read): afterwards `position` is 0 and `end` at least 4.
   */
  refill(): void {
    const blocks = Math.min(MAX_BLOCKS, Math.max(1, Math.ceil(this.expected / 4)));
    this.expected = Math.max(0, this.expected - 4 * blocks);
    const out = this.buffer;
    const key0 = this.k0 | 0;
    const key1 = this.k1 | 0;
    const first = this.nextBlock;
    for (let b = 0; b < blocks; b++) {
      const c = first + b;
      let c0 = c | 0;
      let c1 = Math.floor(c / TWO_POW_32) | 0;
      let c2 = 0;
      let c3 = 0;
      let k0 = key0;
      let k1 = key1;
      for (let round = 0; round < 10; round++) {
        const hi0 = mulHi(c0, M0);
        const lo0 = Math.imul(M0, c0);
        const hi1 = mulHi(c2, M1);
        const lo1 = Math.imul(M1, c2);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 = (k0 + W0) | 0;
        k1 = (k1 + W1) | 0;
      }
      const o = 4 * b;
      out[o] = c0;
      out[o + 1] = c1;
      out[o + 2] = c2;
      out[o + 3] = c3;
    }
    this.nextBlock = first + blocks;
    this.position = 0;
    this.ready = 4 * blocks;
  }
}
