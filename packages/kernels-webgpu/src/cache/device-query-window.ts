import type { DeviceHealth } from '../device/device-health';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';

/** A run of consecutive slots of a {@link DeviceQueryWindow}: `tokens` queries from float `offset`. */
export interface QueryRun {
  readonly offset: number;
  readonly tokens: number;
}

/**
 * The newest `capacity` recorded queries of every layer of one cache, on the device: a ring per
 * layer in one buffer, `[layers, capacity, queryHeads, headDim]`. It is the device half of the
 * host `QueryWindow` the cache's mirror keeps with the positions: both record the same tokens and
 * forget the same newest ones on truncation, so the newest `n` here are the mirror's newest `n`.
 * Queries come from the host (uploaded) or from a step's rows already on the device (copied);
 * an observation copies the newest into its own buffer ({@link DeviceQueryWindow.latest}).
 */
export class DeviceQueryWindow {
  /** The rings, `[layers, capacity, queryHeads, headDim]` floats (storage, copy source and target). */
  readonly buffer: GPUBuffer;
  private readonly stride: number;
  /** Per layer, the slot the next query goes to. */
  private readonly next: Int32Array;
  /** Per layer, the queries held (≤ capacity). */
  private readonly held: Int32Array;

  constructor(
    private readonly device: GPUDevice,
    layers: number,
    readonly capacity: number,
    queryHeads: number,
    headDim: number,
    health: DeviceHealth,
  ) {
    this.stride = queryHeads * headDim;
    this.next = new Int32Array(layers);
    this.held = new Int32Array(layers);
    const bytes = 4 * layers * capacity * this.stride;
    this.buffer = health.allocating(device, 'queryWindow', () =>
      createGpuBuffer(
        device,
        bytes,
        Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST,
        'queryWindow',
      ),
    );
  }

  /** Queries `layer` holds. */
  size(layer: number): number {
    return this.held[layer]!;
  }

  /** Uploads the newest `capacity` of `queries` (`[T, queryHeads, headDim]`) into `layer`'s ring. */
  write(layer: number, queries: Float32Array): void {
    const tokens = queries.length / this.stride;
    const skipped = Math.max(0, tokens - this.capacity);
    let from = skipped * this.stride;
    for (const run of this.record(layer, tokens - skipped)) {
      const floats = run.tokens * this.stride;
      writeArray(this.device, this.buffer, 4 * run.offset, queries.subarray(from, from + floats));
      from += floats;
    }
  }

  /**
   * Copies `tokens` queries from float `offset` of `source` (a step's rows on the same device)
   * into `layer`'s ring, the newest `capacity` of them; one submission, ordered after the work
   * submitted before.
   */
  copy(layer: number, source: GPUBuffer, offset: number, tokens: number): void {
    const skipped = Math.max(0, tokens - this.capacity);
    let from = offset + skipped * this.stride;
    const encoder = this.device.createCommandEncoder({ label: 'query window copy' });
    for (const run of this.record(layer, tokens - skipped)) {
      const floats = run.tokens * this.stride;
      encoder.copyBufferToBuffer(source, 4 * from, this.buffer, 4 * run.offset, 4 * floats);
      from += floats;
    }
    this.device.queue.submit([encoder.finish()]);
  }

  /** Forgets `layer`'s newest queries until it holds `size` (the mirror's count after a truncation). */
  shrink(layer: number, size: number): void {
    const dropped = this.held[layer]! - size;
    this.next[layer] = (this.next[layer]! - dropped + this.capacity) % this.capacity;
    this.held[layer] = size;
  }

  /** The runs holding `layer`'s newest `n` (≤ size) queries, oldest first (two when they wrap). */
  latest(layer: number, n: number): QueryRun[] {
    const first = (this.next[layer]! - n + this.capacity) % this.capacity;
    return this.runs(layer, first, n);
  }

  /** Destroys the buffer (once). */
  dispose(): void {
    destroyGpuBuffer(this.buffer);
  }

  /** Takes the slots of `tokens` (≤ capacity) new queries of `layer`; returns their runs. */
  private record(layer: number, tokens: number): QueryRun[] {
    const runs = this.runs(layer, this.next[layer]!, tokens);
    this.next[layer] = (this.next[layer]! + tokens) % this.capacity;
    this.held[layer] = Math.min(this.capacity, this.held[layer]! + tokens);
    return runs;
  }

  /** The runs of `tokens` (≤ capacity) slots from `first` on, wrapping once. */
  private runs(layer: number, first: number, tokens: number): QueryRun[] {
    const base = layer * this.capacity;
    const head = Math.min(tokens, this.capacity - first);
    const runs = [{ offset: (base + first) * this.stride, tokens: head }];
    if (tokens > head) runs.push({ offset: base * this.stride, tokens: tokens - head });
    return runs.filter((run) => run.tokens > 0);
  }
}
