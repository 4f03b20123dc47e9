import type { CacheGeometry } from '@lethe/kv-cache';
import type { PoolBuffers } from '../cache/page-pool';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { type WordArray, writeArray } from '../device/write-array';

/** What a pass over one layer's pool binds: the device, the cache's shape and the pool. */
export interface LayerPass {
  readonly device: GPUDevice;
  readonly geometry: CacheGeometry;
  readonly queryHeads: number;
  readonly pool: PoolBuffers;
  /** Row stride of the page table (the pool's capacity in pages). */
  readonly tableStride: number;
  /** The table row of the cache's KV head 0 (its slot's first row). */
  readonly tableBase: number;
}

/**
 * The buffers one group of passes makes and drops once they are submitted (WebGPU keeps a
 * destroyed buffer's submitted work valid): inputs written from the host, scratch, parameters.
 */
export class PassBuffers {
  private readonly made: GPUBuffer[] = [];

  constructor(private readonly device: GPUDevice) {}

  /** A buffer holding `data` (storage, or uniform with `uniform`). */
  input(data: WordArray, label: string, uniform = false): GPUBuffer {
    const usage = (uniform ? Usage.UNIFORM : Usage.STORAGE) | Usage.COPY_DST;
    const buffer = this.scratch(Math.max(data.byteLength, 4), label, usage);
    writeArray(this.device, buffer, 0, data);
    return buffer;
  }

  /** A zeroed buffer of `bytes` (storage and copy source by default). */
  scratch(bytes: number, label: string, usage = Usage.STORAGE | Usage.COPY_SRC): GPUBuffer {
    const buffer = createGpuBuffer(this.device, Math.max(bytes, 4), usage, label);
    this.made.push(buffer);
    return buffer;
  }

  /** Destroys every buffer made here. */
  destroy(): void {
    for (const buffer of this.made.splice(0)) destroyGpuBuffer(buffer);
  }
}

/** A bind group entry of a whole buffer. */
export function bound(binding: number, buffer: GPUBuffer): GPUBindGroupEntry {
  return { binding, resource: { buffer } };
}
