import { PagePool, type PoolShape } from './page-pool';

/** Per device, the open pools by shape. */
const pools = new WeakMap<GPUDevice, Map<string, PagePool>>();

/**
 * The page pool of `shape` on `device`, shared by every cache of that shape there (made when none
 * is open; it leaves the registry when its last slot closes).
 */
export function sharedPagePool(device: GPUDevice, shape: PoolShape): PagePool {
  let byShape = pools.get(device);
  if (byShape === undefined) {
    byShape = new Map();
    pools.set(device, byShape);
  }
  const { layers: _layers, ...geometry } = shape.geometry;
  const key = JSON.stringify({
    ...geometry,
    gated: shape.gated,
    tracked: shape.tracked,
    bounded: shape.bounded,
    layer: shape.layer,
  });
  let pool = byShape.get(key);
  if (pool === undefined) {
    const made: PagePool = new PagePool(device, shape, () => {
      if (byShape.get(key) === made) byShape.delete(key);
    });
    pool = made;
    byShape.set(key, pool);
  }
  return pool;
}
