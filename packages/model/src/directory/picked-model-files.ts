import { LetheError } from '@lethe/core';
import type { ModelFiles } from './model-files';

/** What {@link modelFilesFromFileList} needs of a `File`. */
export interface PickedFile {
  readonly name: string;
  /** `folder/…/name` below the picked folder (`<input webkitdirectory>` sets it). */
  readonly webkitRelativePath?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * The files of a model directory a visitor picked in a browser: the `FileList` of an
 * `<input type="file" webkitdirectory>` (file `name` is the one whose relative path is
 * `<picked folder>/name`) or of a multiple-file input (matched by file name). A file not
 * among them is missing.
 *
 * @throws LetheError `E_ARG` naming `files` when they are not files or lie in several folders.
 */
export function modelFilesFromFileList(files: Iterable<PickedFile>): ModelFiles {
  const byName = new Map<string, PickedFile>();
  let folder: string | undefined;
  for (const file of files) {
    if (typeof file?.arrayBuffer !== 'function' || typeof file.name !== 'string') {
      throw new LetheError('E_ARG', 'must hold File objects', 'files');
    }
    const relative = file.webkitRelativePath || file.name;
    const slash = relative.indexOf('/');
    const root = slash < 0 ? '' : relative.slice(0, slash);
    if (folder !== undefined && root !== folder) {
      throw new LetheError('E_ARG', `lie in several folders (${folder}, ${root})`, 'files');
    }
    folder = root;
    byName.set(slash < 0 ? relative : relative.slice(slash + 1), file);
  }
  const location = folder || '(picked files)';
  const pathOf = (name: string) => `${location}/${name}`;
  return {
    location,
    pathOf,
    async read(name) {
      const file = byName.get(name);
      if (file === undefined) return undefined;
      try {
        return new Uint8Array(await file.arrayBuffer());
      } catch (error) {
        throw new LetheError(
          'E_CHECKPOINT',
          `cannot be read: ${(error as Error).message}`,
          pathOf(name),
        );
      }
    },
  };
}
