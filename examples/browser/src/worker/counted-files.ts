import type { ModelFiles } from '@lethe/model';

/**
 * A {@link ModelFiles} that reports every file it reads and the bytes read so far (a file read
 * twice counts once).
 */
export function countedFiles(
  files: ModelFiles,
  onRead: (file: string, totalBytes: number) => void,
): ModelFiles & { readonly bytes: () => number } {
  let total = 0;
  const counted = new Set<string>();
  return {
    location: files.location,
    pathOf: (name) => files.pathOf(name),
    async read(name) {
      const bytes = await files.read(name);
      if (bytes !== undefined && !counted.has(name)) {
        counted.add(name);
        total += bytes.byteLength;
        onRead(files.pathOf(name), total);
      }
      return bytes;
    },
    bytes: () => total,
  };
}
