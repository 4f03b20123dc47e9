import { LetheError } from '@lethe/core';
import {
  createGpuBuffer,
  type DeviceKVCache,
  type DeviceRows,
  destroyGpuBuffer,
} from '@lethe/kernels-webgpu';
import type { tf } from '@lethe/tensor';
import type { CachedStepRequest } from './cached-step';
import { TENSOR_USAGE, tensorOfBuffer } from './device-tensor';
import type { PackedRows } from './packed-rows';
import type { SequenceRead } from './read-plan';
import { flaggedValue } from './row-flags';
import type { StepReads } from './types';

/**
 * Per sequence of a step on device caches, whether its cache ranks pages itself (page bounds on
 * the device, no host copy of the keys): its read selector's pages and κ reads are then ranked by
 * the attention launch, and its query never reaches the host for them.
 */
export function deviceRankedSequences(caches: readonly DeviceKVCache[]): boolean[] {
  return caches.map((cache) => cache.pageBounds && !cache.hostKeys);
}

/**
 * Whether sequence `b` of a step ranks pages anywhere: a read selector, or a `tokenKeep` κ < 1
 * at some layer.
 */
export function ranksPages(request: CachedStepRequest, b: number): boolean {
  if (request.readSelectors?.[b] !== undefined) return true;
  const perLayer = request.controls?.[b];
  return (
    perLayer?.some((control) => control?.tokenKeep !== undefined && control.tokenKeep < 1) === true
  );
}

/**
 * The reads a step's device ranked, to complete its {@link StepReads} once the device has
 * reported them: which (sequence, layer, KV head) were ranked, their counts read back from where
 * the launches wrote them — the step's rows' read counts (`DeviceRows.readCountSlot`), or, on the
 * host path, a `[layers, tokens, kvHeads]` buffer of the step's own ({@link RankedReads.countsFor}).
 */
export class RankedReads {
  private readonly ranked: { b: number; layer: number; h: number }[] = [];
  private buffer: GPUBuffer | undefined;

  constructor(
    private readonly rows: PackedRows,
    private readonly layers: number,
    private readonly kvHeads: number,
  ) {}

  /** Whether any read was ranked. */
  get any(): boolean {
    return this.ranked.length > 0;
  }

  /** Notes the heads a layer's plan ranks. */
  record(layer: number, planned: readonly SequenceRead[]): void {
    planned.forEach((read, b) => {
      read.ranking?.heads.forEach((head, h) => {
        if (head !== undefined) this.ranked.push({ b, layer, h });
      });
    });
  }

  /**
   * The host path's counts target for sequence `b` at `layer` (made on first use on `device`):
   * word `(layer·tokens + firstRow)·kvHeads + h` of the step's counts buffer.
   */
  countsFor(device: GPUDevice, layer: number, b: number) {
    this.buffer ??= createGpuBuffer(
      device,
      4 * this.layers * this.rows.count * this.kvHeads,
      TENSOR_USAGE,
      'ranked read counts',
    );
    return {
      buffer: this.buffer,
      offset: (layer * this.rows.count + this.rows.starts[b]!) * this.kvHeads,
    };
  }

  /** The host path's counts as a tensor to read, or undefined when nothing was ranked there. */
  countsTensor(): tf.Tensor | undefined {
    if (this.buffer === undefined) return undefined;
    return tensorOfBuffer(this.buffer, [this.buffer.size / 4], 'int32');
  }

  /**
   * Writes the ranked heads' counts into `reads`: from `counts` (the host path's buffer, read
   * back) or from the device rows' flags.
   */
  complete(reads: StepReads, counts: Int32Array, deviceRows: DeviceRows | undefined): void {
    for (const { b, layer, h } of this.ranked) {
      const row = this.rows.starts[b]!;
      const slot =
        deviceRows === undefined
          ? (layer * this.rows.count + row) * this.kvHeads + h
          : deviceRows.readCountSlot(layer, row, h);
      reads.entries[(b * this.layers + layer) * this.kvHeads + h] = counts[slot]!;
    }
  }

  /**
   * Throws what the host throws for a non-finite query a read ranks pages by (`E_STATE` naming
   * `model`) when a ranked sequence's query row is flagged in the rows' `flags`, layers in order.
   */
  checkQueries(flags: Int32Array, tokens: number): void {
    for (const { b, layer } of this.ranked) {
      const bits = flags[layer * 3 * tokens + this.rows.starts[b]!]!;
      if (bits === 0) continue;
      throw new LetheError(
        'E_STATE',
        `layer ${layer} produced a non-finite query (${flaggedValue(bits)}) for sequence ${b}: its weights or activations overflow; no cache was changed`,
        'model',
      );
    }
  }

  /** Frees the host path's counts buffer. */
  dispose(): void {
    if (this.buffer !== undefined) destroyGpuBuffer(this.buffer);
    this.buffer = undefined;
  }
}
