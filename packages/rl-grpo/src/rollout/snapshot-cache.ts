import { type PolicySnapshot, unpackSnapshot } from './policy-snapshot';

/** Options of a {@link SnapshotCache}. */
export interface SnapshotCacheOptions<T> {
  /** Frees a value the cache lets go of (e.g. disposes its tensors). Default: nothing. */
  readonly dispose?: (value: T) => void;
}

/**
 * Keeps the weights built from the latest {@link PolicySnapshot}, for a rollout worker that runs
 * many tasks: {@link SnapshotCache.get} calls `load` only when the snapshot's version differs
 * from the cached one, so weights are rebuilt once per learner step, not once per request. The
 * cache knows snapshots by version alone.
 *
 * @example
 * ```ts
 * const weights = new SnapshotCache<Map<string, tf.Tensor>>({
 *   dispose: (tensors) => tf.dispose([...tensors.values()]),
 * });
 * export default function rollout({ request, snapshot }) {
 *   const params = weights.get(snapshot, (arrays) => new Map(
 *     snapshot.layout.map(({ name, shape }) => [name, tf.tensor(arrays.get(name)!, [...shape])]),
 *   ));
 *   // … sample with params, seeded by request
 * }
 * ```
 */
export class SnapshotCache<T> {
  private readonly disposeValue: ((value: T) => void) | undefined;
  private cached: { readonly version: number; readonly value: T } | undefined;

  /** @param options how to free a value the cache lets go of. */
  constructor(options: SnapshotCacheOptions<T> = {}) {
    this.disposeValue = options.dispose;
  }

  /** Version of the cached value, `undefined` when empty. */
  get version(): number | undefined {
    return this.cached?.version;
  }

  /**
   * The value for `snapshot`: the cached one when its version matches, else
   * `load(unpackSnapshot(snapshot))`, which replaces it. The old value is disposed before `load`
   * runs, so two sets of weights are never held at once; if `load` throws, the cache is left empty.
   */
  get(snapshot: PolicySnapshot, load: (arrays: Map<string, Float32Array>) => T): T {
    if (this.cached !== undefined && this.cached.version === snapshot.version) {
      return this.cached.value;
    }
    this.clear();
    const value = load(unpackSnapshot(snapshot));
    this.cached = { version: snapshot.version, value };
    return value;
  }

  /** Disposes and forgets the cached value, if any. */
  clear(): void {
    const cached = this.cached;
    this.cached = undefined;
    if (cached !== undefined) this.disposeValue?.(cached.value);
  }
}
