import { assertInteger, LetheError } from '@lethe/core';

/**
 * Entries a sparse read never skips, per KV head: the first `sinks` live entries (attention
 * sinks) and the `window` most recent ones. By live index, not token position: after an
 * eviction the oldest survivors are the sinks.
 */
export interface ReadAnchors {
  /** Oldest live entries always read. */
  readonly sinks: number;
  /** Newest live entries always read. */
  readonly window: number;
}

/** The always-read entries of SOL's sparse attention (§4: 4 sinks and a 2-token window). */
export const DEFAULT_READ_ANCHORS: ReadAnchors = Object.freeze({ sinks: 4, window: 2 });

/**
 * Fills the defaults of {@link DEFAULT_READ_ANCHORS} into `input` and checks it.
 *
 * @throws LetheError `E_ARG` naming `argument` when `input` is not an object, or
 *   `<argument>.sinks` / `<argument>.window` unless a non-negative integer.
 */
export function resolveReadAnchors(
  input: Partial<ReadAnchors> | undefined,
  argument = 'readAnchors',
): ReadAnchors {
  if (input === undefined) return DEFAULT_READ_ANCHORS;
  if (typeof input !== 'object' || input === null) {
    throw new LetheError('E_ARG', 'must be an object { sinks, window }', argument);
  }
  return Object.freeze({
    sinks: assertInteger(input.sinks ?? DEFAULT_READ_ANCHORS.sinks, `${argument}.sinks`, 0),
    window: assertInteger(input.window ?? DEFAULT_READ_ANCHORS.window, `${argument}.window`, 0),
  });
}
