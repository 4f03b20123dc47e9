/**
 * Read access to the files of a model directory wherever they are: a folder on disk
 * (`nodeModelFiles` of `@lethe/model/node`), a web server ({@link modelFilesFromUrl}) or the
 * files a visitor picked in a browser ({@link modelFilesFromFileList}). {@link readModelFiles}
 * reads a model through it.
 */
export interface ModelFiles {
  /** The directory (a path or URL), for messages. */
  readonly location: string;
  /** How file `name` of the directory is named in messages (a path or URL). */
  pathOf(name: string): string;
  /**
   * The bytes of file `name` (relative to the directory), or `undefined` when there is no such
   * file.
   *
   * @throws LetheError `E_CHECKPOINT` naming the file (`pathOf(name)`) when it exists but cannot
   *   be read, and why.
   */
  read(name: string): Promise<Uint8Array | undefined>;
}
