/**
 * Where a trainer keeps its single, latest checkpoint. `write` must replace the previous
 * checkpoint atomically (readers see the old or the new bytes, never a mix); `read` returns
 * `undefined` when nothing was written yet. Node's `directoryCheckpointStore` (from the
 * `node` barrel) writes a file; a browser app can back a store with IndexedDB or OPFS.
 */
export interface CheckpointStore {
  /** The stored checkpoint bytes, or `undefined` when there are none. */
  read(): Promise<Uint8Array | undefined>;
  /** Replaces the stored checkpoint with `bytes`, atomically. */
  write(bytes: Uint8Array): Promise<void>;
}
