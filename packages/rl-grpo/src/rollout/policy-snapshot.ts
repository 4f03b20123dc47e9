import { assertInteger, LetheError } from '@lethe/core';
import type { tf } from '@lethe/tensor';

/** Where one parameter lies in a {@link PolicySnapshot}'s buffer. */
export interface SnapshotEntry {
  /** Parameter name, unique within the snapshot. */
  readonly name: string;
  /** The parameter's shape; it holds `shape.reduce((a, b) => a * b, 1)` values. */
  readonly shape: readonly number[];
  /** Index of its first value in the buffer viewed as one `Float32Array` (elements, not bytes). */
  readonly offset: number;
}

/**
 * The policy's weights at one learner step, packed for rollout workers: every float32 parameter,
 * row-major, back to back in one buffer. It is plain data, so it crosses `postMessage` as is; a
 * `SharedArrayBuffer` is shared with every worker thread instead of copied.
 *
 * Rollout workers identify weights by `version` alone (see `SnapshotCache`), so a learner must
 * give each distinct set of weights its own version, e.g. its update count.
 */
export interface PolicySnapshot {
  /** Identifies these weights: a new value for every change of weights (integer ≥ 0). */
  readonly version: number;
  /** All values, `float32`, in the order of `layout`. */
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  /** One entry per parameter, in packing order. */
  readonly layout: readonly SnapshotEntry[];
}

/**
 * Packs `params` into a {@link PolicySnapshot}, in the map's order, reading each tensor back from
 * the backend once (asynchronously, so a GPU backend is not stalled per parameter). The buffer is
 * a `SharedArrayBuffer` where the platform has one (Node; browsers only when cross-origin
 * isolated), else an `ArrayBuffer`, which `postMessage` copies to each worker. The tensors are
 * neither changed nor disposed.
 *
 * @throws LetheError `E_ARG` for an empty `params` or a `version` that is not an integer ≥ 0,
 * `E_DTYPE` naming a parameter that is not float32.
 * @example
 * ```ts
 * const snapshot = await packSnapshot(model.parameters, step);
 * ```
 */
export async function packSnapshot(
  params: ReadonlyMap<string, tf.Variable | tf.Tensor>,
  version: number,
): Promise<PolicySnapshot> {
  assertInteger(version, 'version', 0);
  if (params.size === 0) throw new LetheError('E_ARG', 'no parameters', 'params');
  const layout: SnapshotEntry[] = [];
  let length = 0;
  for (const [name, param] of params) {
    if (param.dtype !== 'float32') {
      throw new LetheError('E_DTYPE', `must be float32, got ${param.dtype}`, name);
    }
    layout.push({ name, shape: [...param.shape], offset: length });
    length += param.size;
  }
  const bytes = length * Float32Array.BYTES_PER_ELEMENT;
  const buffer =
    typeof SharedArrayBuffer === 'function' ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  const all = new Float32Array(buffer);
  let i = 0;
  for (const param of params.values()) {
    all.set((await param.data()) as Float32Array, layout[i++]!.offset);
  }
  return { version, buffer, layout };
}

/**
 * The parameters of `snapshot` as `Float32Array` views into its buffer, by name, in layout order.
 * Nothing is copied: the views alias the snapshot (shared across threads for a
 * `SharedArrayBuffer`), so copy one before changing it.
 *
 * @throws LetheError `E_FORMAT` naming `layout[i]` for an entry with a duplicate name, a shape of
 * anything but integers ≥ 0, or values outside the buffer.
 * @example
 * ```ts
 * const arrays = unpackSnapshot(snapshot);
 * const w = tf.tensor(arrays.get('w')!, snapshot.layout[0]!.shape as number[]);
 * ```
 */
export function unpackSnapshot(snapshot: PolicySnapshot): Map<string, Float32Array> {
  const capacity = Math.floor(snapshot.buffer.byteLength / Float32Array.BYTES_PER_ELEMENT);
  const arrays = new Map<string, Float32Array>();
  snapshot.layout.forEach(({ name, shape, offset }, i) => {
    const argument = `layout[${i}]`;
    if (arrays.has(name)) throw new LetheError('E_FORMAT', `duplicate name "${name}"`, argument);
    if (!shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new LetheError('E_FORMAT', `bad shape [${shape}]`, argument);
    }
    const size = shape.reduce((a, b) => a * b, 1);
    if (!Number.isInteger(offset) || offset < 0 || offset + size > capacity) {
      throw new LetheError(
        'E_FORMAT',
        `values [${offset}, ${offset + size}) outside the buffer's ${capacity}`,
        argument,
      );
    }
    arrays.set(
      name,
      new Float32Array(snapshot.buffer, offset * Float32Array.BYTES_PER_ELEMENT, size),
    );
  });
  return arrays;
}
