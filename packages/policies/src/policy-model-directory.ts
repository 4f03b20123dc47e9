import { LetheError } from '@lethe/core';

/** A URL scheme of two or more characters (`C:` is a Windows drive, not a scheme). */
const SCHEME = /^[a-zA-Z][a-zA-Z\d+.-]+:/;

/**
 * The model directory a policy directory's manifest names: `model` (policy.json's `model`, a
 * relative path such as `"."` or `"../countdown"`) joined to the policy directory `dir`, without
 * `node:path`, so that it works in a browser.
 *
 * - When `dir` is an absolute URL (it has a scheme: `https:`, `http:`, `file:`…), `model` is
 *   resolved as a relative URL against `dir` taken as a directory — `new URL(model + '/', dir)`
 *   with a `/` added to the end of `dir`'s path when it has none (never doubled; its query and
 *   fragment do not carry over). The result is a directory URL, ending in `/`, as
 *   `modelFilesFromUrl` of `@lethe/model` takes it.
 * - Otherwise `dir` is a plain path (relative, or absolute from `/`): the two are joined with
 *   `/` and normalised POSIX-style — empty and `.` segments dropped, `..` removing the segment
 *   before it (kept at the start of a relative path, dropped at the root of an absolute one). The
 *   result has no trailing `/` (`.` for an empty path). Backslashes are not separators.
 *
 * `model` is meant to be relative, as `policy.json` says; one that is not resolves as a link
 * would on a URL (`/x` from the server's root, `https://…` as is) and lies below `dir` on a path
 * (as `join` of `node:path` puts it).
 *
 * @example
 * ```ts
 * policyModelDirectory('https://example.test/models/ngc', '../countdown');
 * // 'https://example.test/models/countdown/'
 * policyModelDirectory('models/countdown-ngc', '.'); // 'models/countdown-ngc'
 * ```
 * @throws LetheError `E_ARG` naming `dir` when it has a scheme but does not resolve as a URL.
 */
export function policyModelDirectory(dir: string, model: string): string {
  if (!SCHEME.test(dir)) return joinPaths(dir, model);
  const relative = model.endsWith('/') ? model : `${model}/`;
  try {
    const base = new URL(dir);
    if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
    return new URL(relative, base).href;
  } catch (error) {
    throw new LetheError(
      'E_ARG',
      `is not a URL the model ${JSON.stringify(model)} resolves against: ${(error as Error).message}`,
      'dir',
    );
  }
}

/** `dir` and `model` joined with `/` and normalised (see {@link policyModelDirectory}). */
function joinPaths(dir: string, model: string): string {
  const absolute = dir.startsWith('/');
  const segments: string[] = [];
  for (const segment of `${dir}/${model}`.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') segments.push(segment);
    else if (segments.length > 0 && segments[segments.length - 1] !== '..') segments.pop();
    else if (!absolute) segments.push('..');
  }
  const joined = segments.join('/');
  return absolute ? `/${joined}` : joined || '.';
}
