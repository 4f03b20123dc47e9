import { LetheError } from '@lethe/core';
import type { ModelFiles } from './model-files';

/** The part of `fetch` {@link modelFilesFromUrl} uses. */
export type FetchFile = (url: string) => Promise<Response>;

/**
 * The files of a model directory served over HTTP below `baseUrl` (a browser page's own static
 * files, or any server): file `name` is `new URL(name, baseUrl)`. A 404 is a missing file; any
 * other failure, `E_CHECKPOINT` naming the URL.
 *
 * @param baseUrl the directory's URL (a trailing `/` is added when missing).
 * @param fetchFile `fetch` (the default) or a stand-in.
 * @throws LetheError `E_ARG` naming `baseUrl` when it is not an absolute URL.
 */
export function modelFilesFromUrl(baseUrl: string, fetchFile: FetchFile = fetch): ModelFiles {
  let base: URL;
  try {
    base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    throw new LetheError(
      'E_ARG',
      `must be an absolute URL, got ${JSON.stringify(baseUrl)}`,
      'baseUrl',
    );
  }
  const pathOf = (name: string) => new URL(name, base).href;
  return {
    location: base.href,
    pathOf,
    async read(name) {
      const url = pathOf(name);
      let response: Response;
      try {
        response = await fetchFile(url);
      } catch (error) {
        throw new LetheError('E_CHECKPOINT', `cannot be fetched: ${(error as Error).message}`, url);
      }
      if (response.status === 404) return undefined;
      if (!response.ok) {
        throw new LetheError(
          'E_CHECKPOINT',
          `cannot be fetched: HTTP ${response.status} ${response.statusText}`.trimEnd(),
          url,
        );
      }
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
