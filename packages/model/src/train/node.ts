// Node-only parts of the trainer (imports node:fs, node:path). Keep out of browser bundles.

export { directoryCheckpointStore, SFT_CHECKPOINT_FILE } from './directory-checkpoint-store';
