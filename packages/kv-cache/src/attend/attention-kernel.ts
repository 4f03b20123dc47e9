import { instantiateEmbedded } from '@lethe/core';
import { ATTENTION_KERNEL_WASM } from './attention-kernel-wasm';

/** What the kernel module exports (`attention-kernel.wat`). */
interface KernelExports {
  readonly memory: WebAssembly.Memory;
  attend(
    queries: number,
    keys: number,
    values: number,
    bias: number,
    scores: number,
    out: number,
    entries: number,
    headDim: number,
    group: number,
    scale: number,
    biased: number,
  ): void;
  weights(
    queries: number,
    keys: number,
    scores: number,
    entries: number,
    headDim: number,
    group: number,
    scale: number,
  ): void;
}

/** Views of one call's blocks in the kernel's memory (`attention-kernel.wat`'s layout). */
export interface KernelOperands {
  /** `[tokens, group, headDim]`. */
  readonly queries: Float32Array;
  /** `[entries rounded up to 4, headDim]`. */
  readonly keys: Float32Array;
  /** `[entries rounded up to 4, headDim]`. */
  readonly values: Float32Array;
  /** `[entries rounded up to 4]`. */
  readonly bias: Float32Array;
  /** `[tokens, group, headDim]`, written by {@link AttentionKernel.run}. */
  readonly out: Float32Array;
  /**
   * The last call's exponentials, `[group, entries rounded up to 4]` for the call's `entries`,
   * then each head's sum (written by {@link AttentionKernel.run} and
   * {@link AttentionKernel.runWeights}).
   */
  readonly scores: Float32Array;
}

const WASM_PAGE_BYTES = 65536;

/**
 * The attention of a query group over a row of entries as a WebAssembly SIMD kernel
 * (`attention-kernel.wat`: four entries' scores side by side, the exponentials four at a time,
 * the weighted values four channels at a time), the same float32 arithmetic as `laneAttention`
 * (`attention-lanes.ts`). One instance per realm; the caller writes a call's operands straight
 * into the kernel's memory ({@link AttentionKernel.operands}), which grows to the largest call
 * and does not shrink.
 */
export class AttentionKernel {
  private layout = { entries: -1, headDim: -1, group: -1, tokens: -1 };
  private blocks: KernelOperands | undefined;
  private scoresAt = 0;

  private constructor(private readonly kernel: KernelExports) {}

  /**
   * The kernel, or undefined where it cannot run (see `instantiateEmbedded`); the portable form,
   * which computes the same bits, runs instead.
   */
  static load(): AttentionKernel | undefined {
    const exports = instantiateEmbedded(ATTENTION_KERNEL_WASM);
    return exports === undefined
      ? undefined
      : new AttentionKernel(exports as unknown as KernelExports);
  }

  /**
   * Views of the blocks of calls over at most `entries` entries for `tokens` query tokens (the
   * head dimension a multiple of 4), valid until the next `operands` call with other sizes. Their
   * contents are whatever the last call left: the caller fills the queries, the keys and values,
   * and the bias when it passes one.
   */
  operands(entries: number, headDim: number, group: number, tokens: number): KernelOperands {
    const { layout } = this;
    if (
      this.blocks !== undefined &&
      layout.entries === entries &&
      layout.headDim === headDim &&
      layout.group === group &&
      layout.tokens === tokens
    ) {
      return this.blocks;
    }
    const rows = 4 * Math.ceil(entries / 4);
    const queryFloats = tokens * group * headDim;
    // float offsets, each block a multiple of 4 floats (16 bytes) long
    const keysAt = queryFloats;
    const valuesAt = keysAt + rows * headDim;
    const biasAt = valuesAt + rows * headDim;
    const scoresAt = biasAt + rows;
    const outAt = scoresAt + group * rows + 4 * Math.ceil(group / 4);
    const end = outAt + queryFloats;
    const { memory } = this.kernel;
    const missing = 4 * end - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / WASM_PAGE_BYTES));
    const view = (at: number, length: number) => new Float32Array(memory.buffer, 4 * at, length);
    this.blocks = {
      queries: view(0, keysAt),
      keys: view(keysAt, rows * headDim),
      values: view(valuesAt, rows * headDim),
      bias: view(biasAt, rows),
      out: view(outAt, queryFloats),
      scores: view(scoresAt, outAt - scoresAt),
    };
    this.scoresAt = scoresAt;
    this.layout = { entries, headDim, group, tokens };
    return this.blocks;
  }

  /**
   * Runs the kernel on the operands of the last {@link AttentionKernel.operands} call: query
   * token `token` over the first `entries` entries.
   */
  run(scale: number, biased: boolean, token: number, entries: number): void {
    const { headDim, group } = this.layout;
    const blocks = this.blocks!;
    const tokenBytes = 4 * token * group * headDim;
    this.kernel.attend(
      blocks.queries.byteOffset + tokenBytes,
      blocks.keys.byteOffset,
      blocks.values.byteOffset,
      blocks.bias.byteOffset,
      4 * this.scoresAt,
      blocks.out.byteOffset + tokenBytes,
      entries,
      headDim,
      group,
      scale,
      +biased,
    );
  }

  /**
   * The softmax weights alone (no values, no bias) of query token `token` over the first
   * `entries` entries: head `g`'s exponentials at `scores[g · ⌈entries / 4⌉ · 4 + j]`, its sum at
   * `scores[group · ⌈entries / 4⌉ · 4 + g]`.
   */
  runWeights(scale: number, token: number, entries: number): void {
    const { headDim, group } = this.layout;
    const blocks = this.blocks!;
    this.kernel.weights(
      blocks.queries.byteOffset + 4 * token * group * headDim,
      blocks.keys.byteOffset,
      4 * this.scoresAt,
      entries,
      headDim,
      group,
      scale,
    );
  }
}
