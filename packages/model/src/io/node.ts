// Node-only file I/O (imports node:fs, node:path, node:crypto). Keep out of browser bundles.

export { loadCheckpoint, type SaveCheckpointOptions, saveCheckpoint } from './checkpoint-files';
export {
  readFileBytes,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from './node-fs';
export {
  type ModelDirectoryContents,
  readModelDirectory,
  writeModelDirectory,
} from './node-model-directory';
export { assertDirectory, nodeModelFiles } from './node-model-files';
export {
  nodePolicyFiles,
  readPolicyDirectory,
  writePolicyDirectory,
} from './node-policy-directory';
