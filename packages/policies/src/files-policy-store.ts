import { LetheError } from '@lethe/core';
import { openPolicyDirectory, type PolicyFiles } from '@lethe/kv-cache';
import type { ModelFiles, ReadModelDirectoryOptions } from '@lethe/model';
import { policyModelDirectory } from './policy-model-directory';
import type { PolicyModel, PolicyStore } from './policy-store';

/**
 * Reads a model directory for {@link filesPolicyStore}: `readModelFiles` of `@lethe/model`
 * itself fits (it is called with `{ tokenizer: 'optional' }`: a policy's checkpoint may have no
 * tokenizer of its own).
 */
export type ReadPolicyModel = (
  files: ModelFiles,
  options: Pick<ReadModelDirectoryOptions, 'tokenizer'>,
) => Promise<PolicyModel>;

/**
 * A {@link PolicyStore} over `ModelFiles` (of `@lethe/model`), wherever they are: a web server
 * (`modelFilesFromUrl`), the files a visitor picked (`modelFilesFromFileList`), memory.
 * Browser-safe.
 *
 * - `open(dir)` reads `policy.json` of `filesOf(dir)` (`openPolicyDirectory` of
 *   `@lethe/kv-cache`) and later the files it names, each through `filesOf(dir).read(name)`; a
 *   missing file is `E_CHECKPOINT` `is missing` naming `files.pathOf(name)`, a file that cannot
 *   be read the reader's own error. The directory's `location` is `filesOf(dir).location`
 *   without a trailing `/`, so that `${location}/${name}` names a file as `pathOf` does.
 * - `loadModel(dir, model)` reads the model directory `model` of the manifest, relative to
 *   `dir` ({@link policyModelDirectory}: URL resolution for a URL, POSIX-style joining for a
 *   path), with `readModel(filesOf(joined), { tokenizer: 'optional' })`.
 *
 * `readModel` is a parameter rather than an import so that this main entry loads no tensor
 * library and does not need `@lethe/model`, an optional peer of this package: pass
 * `readModelFiles` of `@lethe/model`.
 *
 * @example
 * ```ts
 * import { modelFilesFromUrl, readModelFiles } from '@lethe/model';
 *
 * const store = filesPolicyStore((dir) => modelFilesFromUrl(dir), readModelFiles);
 * const dir = new URL('models/countdown-ngc', location.href).href;
 * const { manifest } = await store.open(dir); // reads dir/policy.json
 * const { model, tokenizer } = await store.loadModel(dir, manifest.model ?? '.');
 * ```
 * @throws LetheError `E_ARG` naming `filesOf` or `readModel` when it is not a function.
 */
export function filesPolicyStore(
  filesOf: (dir: string) => ModelFiles,
  readModel: ReadPolicyModel,
): PolicyStore {
  if (typeof filesOf !== 'function') {
    throw new LetheError(
      'E_ARG',
      'must be a function from a directory to its ModelFiles',
      'filesOf',
    );
  }
  if (typeof readModel !== 'function') {
    throw new LetheError(
      'E_ARG',
      "must be a function reading a model directory (@lethe/model's readModelFiles)",
      'readModel',
    );
  }
  return {
    open: async (dir) => openPolicyDirectory(policyFiles(filesOf(dir))),
    loadModel: async (dir, model) => {
      const loaded = await readModel(filesOf(policyModelDirectory(dir, model)), {
        tokenizer: 'optional',
      });
      return loaded.tokenizer === undefined
        ? { model: loaded.model }
        : { model: loaded.model, tokenizer: loaded.tokenizer };
    },
  };
}

/** `files` as the files of a policy directory: a missing file is `E_CHECKPOINT` naming it. */
function policyFiles(files: ModelFiles): PolicyFiles {
  const readBytes = async (name: string): Promise<Uint8Array> => {
    const bytes = await files.read(name);
    if (bytes === undefined) throw new LetheError('E_CHECKPOINT', 'is missing', files.pathOf(name));
    return bytes;
  };
  const { location } = files;
  return {
    location: location.length > 1 && location.endsWith('/') ? location.slice(0, -1) : location,
    readText: async (name) => new TextDecoder().decode(await readBytes(name)),
    readBytes,
  };
}
