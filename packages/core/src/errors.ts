/**
 * Base class of every error Lethe throws on bad input. Each error carries a stable
 * machine-readable `code` (e.g. `E_SHAPE`) and, where one exists, the name of the
 * argument or tensor at fault, so callers can branch on `code` rather than on messages.
 *
 * @example
 * ```ts
 * try { cache.keep(0, -1, new Int32Array([3])); }
 * catch (e) { if (e instanceof LetheError && e.code === 'E_ARG') console.log(e.argument); }
 * ```
 */
export class LetheError extends Error {
  /** Stable code, one of {@link LetheErrorCode}. */
  readonly code: LetheErrorCode;
  /** The argument, field or tensor name the error is about, when there is one. */
  readonly argument: string | undefined;

  constructor(code: LetheErrorCode, message: string, argument?: string) {
    super(argument === undefined ? `[${code}] ${message}` : `[${code}] ${argument}: ${message}`);
    this.name = new.target.name;
    this.code = code;
    this.argument = argument;
  }
}

/**
 * Stable error codes shared by all Lethe packages.
 *
 * - `E_ARG`: an argument has an invalid value (wrong range, non-integer, NaN, unknown option).
 * - `E_SHAPE`: an array or tensor has the wrong shape or length.
 * - `E_DTYPE`: a tensor or buffer has an unsupported or unexpected dtype.
 * - `E_BUDGET`: a cache budget is invalid: a ratio outside (0, 1], a keep count or capacity that
 *   is not a valid integer, a form the callee does not take, or anchors it cannot hold.
 * - `E_STATE`: the call is not valid in the object's current state.
 * - `E_FORMAT`: a file or serialised blob is malformed, truncated or of another version.
 * - `E_CHECKPOINT`: a checkpoint does not match the model (missing, extra or mis-shaped tensors).
 * - `E_BACKEND`: a requested tensor backend is unavailable.
 * - `E_CAPACITY`: a service is full (every slot taken and its queue too); retry later.
 * - `E_QUEUE`: a distributed job queue cannot go on: Redis does not answer, an item failed on
 *   every try, or a worker's packages or files differ from its run's.
 */
export type LetheErrorCode =
  | 'E_ARG'
  | 'E_SHAPE'
  | 'E_DTYPE'
  | 'E_BUDGET'
  | 'E_STATE'
  | 'E_FORMAT'
  | 'E_CHECKPOINT'
  | 'E_BACKEND'
  | 'E_CAPACITY'
  | 'E_QUEUE';
