export type { ModelFiles } from './model-files';
export { modelFilesFromFileList, type PickedFile } from './picked-model-files';
export {
  GENERATION_CONFIG_FILE,
  type ModelDirectory,
  type ReadModelDirectoryOptions,
  readModelFiles,
} from './read-model-files';
export { type FetchFile, modelFilesFromUrl } from './url-model-files';
export { decodeWeightFiles, readWeightFiles, type WeightFiles } from './weight-files';
