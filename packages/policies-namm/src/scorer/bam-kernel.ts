import { compileEmbedded } from '@lethe/core';
import { BAM_KERNEL_WASM } from './bam-kernel-wasm';
import { softmaxTail } from './softmax-tail';

/** What the kernel module exports (`bam-kernel.wat`). */
interface KernelExports {
  readonly memory: WebAssembly.Memory;
  project(n: number, scale: number): void;
  logits(i0: number, n: number): void;
  mix(i0: number, n: number): void;
  readout(i0: number, rows: number, b: number): void;
}

/** The BAM parameters, as `unpackGenome` gives them. */
export interface BamWeights {
  readonly Wq: Float64Array;
  readonly bq: Float64Array;
  readonly Wk: Float64Array;
  readonly bk: Float64Array;
  readonly Wv: Float64Array;
  readonly bv: Float64Array;
  readonly Wo: Float64Array;
  readonly bo: Float64Array;
  readonly w: Float64Array;
  readonly b: number;
}

/** Rows of a block, as in `bam-scorer.ts`. */
const BLOCK = 4;
const HEADER_BYTES = 128;
const WASM_PAGE_BYTES = 65536;
/** Header slots (i32 index) of the blocks' offsets and the capacity, `bam-kernel.wat`'s layout. */
const SLOT = {
  ...{
    wqT: 5,
    wkT: 6,
    wvT: 7,
    bq: 8,
    bk: 9,
    bv: 10,
    woRes: 11,
    woM: 12,
    boRes: 13,
    boM: 14,
    w: 15,
  },
  ...{ cap: 4, x: 16, q: 17, kT: 18, v: 19, p: 20, u: 21, inv: 22, out: 23 },
} as const;

/** The module, compiled once per realm; null where it cannot run. */
let compiled: WebAssembly.Module | null | undefined;

const align16 = (bytes: number): number => 16 * Math.ceil(bytes / 16);
const roundUp = (n: number, multiple: number): number => multiple * Math.ceil(n / multiple);

/**
 * The BAM scorer's arithmetic as a WebAssembly SIMD kernel (`bam-kernel.wat`): the same float64
 * operations in the same order as `BamScorer`'s portable form, so the same bits, two independent
 * sums per instruction. One instance per scorer, holding its parameters in the kernel's memory;
 * the memory grows with the largest n scored and does not shrink.
 */
export class BamKernel {
  private readonly kernel: KernelExports;
  private readonly features: number;
  private readonly hidden: number;
  private readonly bias: number;
  /** Where the per-capacity blocks begin (after the header and the parameters). */
  private readonly blocksAt: number;
  private capacity = 0;
  private x = new Float32Array(0);
  private p = new Float64Array(0);
  private inv = new Float64Array(0);
  private out = new Float32Array(0);

  private constructor(
    kernel: KernelExports,
    features: number,
    hidden: number,
    weights: BamWeights,
  ) {
    this.kernel = kernel;
    this.features = features;
    this.hidden = hidden;
    this.bias = weights.b;
    this.blocksAt = this.writeParameters(weights);
  }

  /**
   * A kernel holding `weights` for `features` F and `hidden` H, or undefined where WebAssembly
   * SIMD cannot run (the portable form runs instead).
   */
  static load(features: number, hidden: number, weights: BamWeights): BamKernel | undefined {
    compiled ??= compileEmbedded(BAM_KERNEL_WASM) ?? null;
    if (compiled === null) return undefined;
    const exports = new WebAssembly.Instance(compiled, {}).exports as unknown as KernelExports;
    return new BamKernel(exports, features, hidden, weights);
  }

  /** Scores n entries (see `Scorer.score`; the arguments are checked by the caller). */
  score(x: Float32Array, n: number, out: Float32Array): void {
    const { kernel } = this;
    this.reserve(n);
    this.x.set(x.subarray(0, n * this.features));
    kernel.project(n, 1 / Math.sqrt(this.hidden));
    const { p, inv, capacity } = this;
    for (let i0 = 0; i0 < n; i0 += BLOCK) {
      const rows = Math.min(BLOCK, n - i0);
      kernel.logits(i0, n);
      for (let r = 0; r < BLOCK; r++) {
        inv[r] = r < rows ? softmaxTail(p, r * capacity + i0 + r, r * capacity + n) : 0;
      }
      kernel.mix(i0, n);
      kernel.readout(i0, rows, this.bias);
    }
    out.set(this.out.subarray(0, n));
  }

  /** Writes the header's sizes and the parameters, transposed and padded; returns their end. */
  private writeParameters(weights: BamWeights): number {
    const f = this.features;
    const h = this.hidden;
    const h4 = roundUp(h, 4);
    const f2 = roundUp(f, 2);
    const blocks: [slot: number, floats: number, fill: (a: Float64Array) => void][] = [];
    const transposed = (matrix: Float64Array) => (a: Float64Array) => {
      for (let r = 0; r < h; r++) for (let c = 0; c < f; c++) a[c * h4 + r] = matrix[r * f + c]!;
    };
    blocks.push([SLOT.wqT, f * h4, transposed(weights.Wq)]);
    blocks.push([SLOT.wkT, f * h4, transposed(weights.Wk)]);
    blocks.push([SLOT.wvT, f * h4, transposed(weights.Wv)]);
    blocks.push([SLOT.bq, h4, (a) => a.set(weights.bq)]);
    blocks.push([SLOT.bk, h4, (a) => a.set(weights.bk)]);
    blocks.push([SLOT.bv, h4, (a) => a.set(weights.bv)]);
    // Wo [2F, H]: rows 0 … F − 1 make res, rows F … 2F − 1 make m; stored [H][F2] each.
    const outRows = (from: number) => (a: Float64Array) => {
      for (let c = 0; c < f; c++)
        for (let r = 0; r < h; r++) a[r * f2 + c] = weights.Wo[(from + c) * h + r]!;
    };
    blocks.push([SLOT.woRes, h * f2, outRows(0)]);
    blocks.push([SLOT.woM, h * f2, outRows(f)]);
    blocks.push([SLOT.boRes, f2, (a) => a.set(weights.bo.subarray(0, f))]);
    blocks.push([SLOT.boM, f2, (a) => a.set(weights.bo.subarray(f, 2 * f))]);
    blocks.push([SLOT.w, f2, (a) => a.set(weights.w)]);
    let at = HEADER_BYTES;
    const offsets = blocks.map(([, floats]) => {
      const start = at;
      at += align16(8 * floats);
      return start;
    });
    this.ensureBytes(at);
    const header = new Int32Array(this.kernel.memory.buffer, 0, HEADER_BYTES / 4);
    header.set([f, h, h4, f2]);
    blocks.forEach(([slot, floats, fill], k) => {
      header[slot] = offsets[k]!;
      fill(new Float64Array(this.kernel.memory.buffer, offsets[k]!, floats));
    });
    return at;
  }

  /** Lays out the per-call blocks for at least n entries (doubling) and refreshes the views. */
  private reserve(n: number): void {
    if (n <= this.capacity) return;
    const capacity = roundUp(Math.max(n, 2 * this.capacity), 4);
    const h4 = roundUp(this.hidden, 4);
    const sizes: [slot: number, bytes: number][] = [
      [SLOT.x, 4 * capacity * this.features],
      [SLOT.q, 8 * (capacity + BLOCK - 1) * h4],
      [SLOT.kT, 8 * h4 * capacity],
      [SLOT.v, 8 * capacity * h4],
      [SLOT.p, 8 * BLOCK * capacity],
      [SLOT.u, 8 * BLOCK * h4],
      [SLOT.inv, 8 * BLOCK],
      [SLOT.out, 4 * capacity],
    ];
    let at = this.blocksAt;
    const offsets = sizes.map(([, bytes]) => {
      const start = at;
      at += align16(bytes);
      return start;
    });
    this.ensureBytes(at);
    const { buffer } = this.kernel.memory;
    const header = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    header[SLOT.cap] = capacity;
    sizes.forEach(([slot], k) => {
      header[slot] = offsets[k]!;
    });
    this.capacity = capacity;
    this.x = new Float32Array(buffer, header[SLOT.x]!, capacity * this.features);
    this.p = new Float64Array(buffer, header[SLOT.p]!, BLOCK * capacity);
    this.inv = new Float64Array(buffer, header[SLOT.inv]!, BLOCK);
    this.out = new Float32Array(buffer, header[SLOT.out]!, capacity);
  }

  private ensureBytes(bytes: number): void {
    const { memory } = this.kernel;
    const missing = bytes - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / WASM_PAGE_BYTES));
  }
}
