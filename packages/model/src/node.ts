/**
 * `@lethe/model/node`: the Node-only parts (file I/O with atomic writes): checkpoints on disk
 * (one `model.safetensors` or sharded), safetensors files, and the trainer's directory
 * checkpoint store.
 *
 * @packageDocumentation
 */
export * from './io/node';
export { directoryCheckpointStore } from './train/node';
