import { DeviceKVCache } from '@lethe/kernels-webgpu';
import { KVCache, type KVCacheOptions, type KVCacheStore } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { CacheReads } from './cache-options';

/**
 * The cache a session or batcher makes when it is given no `createCache`: on tfjs's WebGPU
 * backend a `DeviceKVCache` on the backend's device (keys and values in device pages, attention
 * by the paged WGSL kernel) — its keys and values on the device only unless `reads.hostKeys` (or
 * `reads` is not given), page key bounds kept there with `reads.pageBounds` —, elsewhere a host
 * `KVCache`. A geometry the device kernels do not
 * support is refused (`E_SHAPE`), never served by other numbers.
 */
export function defaultCache(options: KVCacheOptions, reads?: CacheReads): KVCacheStore {
  if (tf.getBackend() === 'webgpu') {
    const device = (tf.backend() as unknown as { device: GPUDevice }).device;
    const hostKeys = reads?.hostKeys ?? true;
    return new DeviceKVCache(
      { ...options, hostKeys, pageBounds: reads?.pageBounds ?? false },
      device,
    );
  }
  return new KVCache(options);
}

/** Frees what a cache holds beyond the heap (a device cache's GPU buffers); others need nothing. */
export function releaseCache(cache: KVCacheStore): void {
  const disposable = cache as KVCacheStore & { dispose?: () => void };
  if (typeof disposable.dispose === 'function') disposable.dispose();
}
