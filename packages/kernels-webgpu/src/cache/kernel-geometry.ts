import { LetheError } from '@lethe/core';
import type { CacheGeometry } from '@lethe/kv-cache';
import { SPLIT_ENTRIES } from '../kernels/paged-attention-wgsl';

/**
 * Workgroup memory the attention pass needs for a query group of `group` heads over `headDim`
 * channels: the group's queries, its scores over one split and the split's slots.
 */
export function attentionWorkgroupBytes(group: number, headDim: number): number {
  return 4 * (group * headDim + group * SPLIT_ENTRIES + SPLIT_ENTRIES);
}

/**
 * Checks that the kernels support a geometry on `device`: head dims a multiple of 4 (keys and
 * values are read as `vec4`s) and a query group whose queries and scores fit the device's
 * workgroup memory.
 *
 * @throws `E_SHAPE` naming `geometry.headDim` or `queryHeads`.
 */
export function checkKernelGeometry(
  device: GPUDevice,
  geometry: CacheGeometry,
  queryHeads: number,
): void {
  if (geometry.headDim % 4 !== 0) {
    throw new LetheError(
      'E_SHAPE',
      `must be a multiple of 4 for the WGSL kernels (they read vec4s), got ${geometry.headDim}`,
      'geometry.headDim',
    );
  }
  const group = queryHeads / geometry.kvHeads;
  const bytes = attentionWorkgroupBytes(group, geometry.headDim);
  const limit = device.limits.maxComputeWorkgroupStorageSize;
  if (bytes > limit) {
    throw new LetheError(
      'E_SHAPE',
      `a group of ${group} query heads per KV head at head dim ${geometry.headDim} needs ` +
        `${bytes} bytes of workgroup memory, past this device's ${limit}`,
      'queryHeads',
    );
  }
}
