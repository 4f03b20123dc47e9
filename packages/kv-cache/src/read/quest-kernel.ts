import { instantiateEmbedded } from '@lethe/core';
import type { QuestInputs } from './quest-inputs';
import { QUEST_KERNEL_WASM } from './quest-kernel-wasm';

/** What the kernel module exports (`quest-kernel.wat`). */
interface KernelExports {
  readonly memory: WebAssembly.Memory;
  questScores(
    min: number,
    max: number,
    split: number,
    out: number,
    pages: number,
    dim: number,
    group: number,
    useMax: number,
  ): void;
  topIndices(scores: number, work: number, chosen: number, n: number, k: number): void;
}

const WASM_PAGE_BYTES = 65536;

/**
 * Quest's page bound, and the choice of the top pages by it, as a WebAssembly SIMD kernel
 * (`quest-kernel.wat`: four channels per f32x4 lane vector, four pages side by side, then the
 * quickselect of `topKIndices`): the same float32 arithmetic as `laneQuestScores`
 * (`quest-lanes.ts`) and the same choice as `topKIndices`, several times faster than JavaScript
 * (figures in the package README). One instance per realm; each call copies the page range's
 * bounds and the split query into the kernel's memory, which grows to the largest call and does
 * not shrink.
 */
export class QuestKernel {
  /** The kernel's memory as floats and as int32 indices (views renewed when it grows). */
  private heap: Float32Array;
  private indices: Int32Array;

  private constructor(private readonly kernel: KernelExports) {
    this.heap = new Float32Array(kernel.memory.buffer);
    this.indices = new Int32Array(kernel.memory.buffer);
  }

  /**
   * The kernel, or undefined where it cannot run (see `instantiateEmbedded`); the portable form,
   * which computes the same bits, runs instead.
   */
  static load(): QuestKernel | undefined {
    const exports = instantiateEmbedded(QUEST_KERNEL_WASM);
    return exports === undefined ? undefined : new QuestKernel(exports as unknown as KernelExports);
  }

  /**
   * Scores of pages `[firstPage, endPage)`: see `questPageScores`. The head dimension
   * (`queries.length / group`) must be a multiple of 4.
   */
  scores(inputs: QuestInputs, useMax: boolean): Float32Array {
    const pages = inputs.endPage - inputs.firstPage;
    const outAt = this.score(inputs, useMax, pages);
    return this.heap.slice(outAt, outAt + pages);
  }

  /**
   * The `k` top pages of `[firstPage, endPage)` by the max-reduced scores, as indices from
   * `firstPage`, ascending, ties to the older page: `topKIndices(questPageScores(…), k)` in one
   * call, the scores never leaving the kernel. `1 ≤ k ≤ endPage − firstPage`; the head dimension
   * must be a multiple of 4.
   */
  topPages(inputs: QuestInputs, k: number): Int32Array {
    const pages = inputs.endPage - inputs.firstPage;
    // the scores, a scratch copy of them and the chosen indices, each in `slots` 16-byte aligned
    const slots = 4 * Math.ceil((pages + 1) / 4);
    const outAt = this.score(inputs, true, 3 * slots);
    const workAt = outAt + slots;
    const chosenAt = workAt + slots;
    this.kernel.topIndices(4 * outAt, 4 * workAt, 4 * chosenAt, pages, k);
    return this.indices.slice(chosenAt, chosenAt + k);
  }

  /**
   * Runs the score kernel with the inputs copied in and `room` floats of memory from the
   * scores on; returns the scores' float offset.
   */
  private score(inputs: QuestInputs, useMax: boolean, room: number): number {
    const { bounds, queries, group, firstPage, endPage } = inputs;
    const dim = queries.length / group;
    const pages = endPage - firstPage;
    // float offsets; each block is a multiple of 4 floats (16 bytes) long
    const maxAt = pages * dim;
    const splitAt = 2 * maxAt;
    const outAt = splitAt + 2 * queries.length;
    const heap = this.reserve(outAt + room);
    heap.set(bounds.min.subarray(firstPage * dim, endPage * dim), 0);
    heap.set(bounds.max.subarray(firstPage * dim, endPage * dim), maxAt);
    for (let g = 0; g < group; g++) {
      const positiveAt = splitAt + 2 * g * dim;
      for (let c = 0; c < dim; c++) {
        const q = queries[g * dim + c];
        const positive = q >= 0;
        heap[positiveAt + c] = positive ? q : 0;
        heap[positiveAt + dim + c] = positive ? 0 : q;
      }
    }
    this.kernel.questScores(0, 4 * maxAt, 4 * splitAt, 4 * outAt, pages, dim, group, +useMax);
    return outAt;
  }

  /** A float32 view of the kernel's memory, grown to at least `floats` floats. */
  private reserve(floats: number): Float32Array {
    const { memory } = this.kernel;
    const missing = 4 * floats - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / WASM_PAGE_BYTES));
    if (this.heap.buffer !== memory.buffer) {
      this.heap = new Float32Array(memory.buffer);
      this.indices = new Int32Array(memory.buffer);
    }
    return this.heap;
  }
}
