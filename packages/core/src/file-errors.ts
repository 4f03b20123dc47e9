import { bareMessage } from './error-context';
import { LetheError, type LetheErrorCode } from './errors';

/** Words for the file-system error codes a read meets most (Node's `errno` codes). */
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory, expected a file',
  ENOTDIR: 'a parent of it is not a directory',
  EMFILE: 'too many open files',
};

/**
 * An error while reading `path` as a `LetheError` that names the file and says why: argument
 * `path`, a message such as `cannot be read: no such file or directory (ENOENT)` (from the
 * error's `code` when it has one, else its message), and code `code` (default `E_CHECKPOINT`,
 * for the files of a model or policy directory; `E_ARG` suits a file named on a command line).
 * A `LetheError` is returned unchanged.
 */
export function unreadableFile(
  path: string,
  error: unknown,
  code: LetheErrorCode = 'E_CHECKPOINT',
): LetheError {
  if (error instanceof LetheError) return error;
  const errno = (error as { code?: unknown } | undefined)?.code;
  const reason =
    typeof errno === 'string' && REASONS[errno] !== undefined
      ? `${REASONS[errno]} (${errno})`
      : error instanceof Error
        ? error.message
        : String(error);
  return new LetheError(code, `cannot be read: ${reason}`, path);
}

/**
 * An error about the contents of the file `path`: a `LetheError` keeps its code and its message
 * (which names the field or tensor) and is re-issued with `path` as its argument, e.g.
 * `[E_ARG] hidden_size: must be …` read from `run/config.json` becomes
 * `[E_ARG] run/config.json: hidden_size: must be …`. Other errors become `E_FORMAT`.
 */
export function inFile(path: string, error: unknown): LetheError {
  if (error instanceof LetheError) {
    if (error.argument === path) return error;
    const message = bareMessage(error);
    return new LetheError(
      error.code,
      error.argument === undefined ? message : `${error.argument}: ${message}`,
      path,
    );
  }
  return new LetheError('E_FORMAT', error instanceof Error ? error.message : String(error), path);
}
