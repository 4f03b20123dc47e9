import { LetheError } from '@lethe/core';

/**
 * A number as written in decimal: an optional minus, digits with an optional fraction (or a
 * fraction alone), an optional exponent. No sign `+`, no whitespace, no `0x` / `0o` / `0b`
 * prefixes, no digit separators, no `Infinity` / `NaN`.
 */
const DECIMAL = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/**
 * The value of a numeric command-line flag, read strictly: `text` must be a finite decimal number
 * (`0.25`, `-3`, `1e-3`) — `Number()` alone would read `0x1` as 1, `""` and `" "` as 0 and
 * `abc` as NaN.
 *
 * @throws LetheError `E_ARG` naming `flag` and quoting `text` for anything else (empty text,
 *   whitespace, hexadecimal, `Infinity`, a value beyond the float range).
 */
export function parseNumberFlag(text: string, flag: string): number {
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value)) {
    throw new LetheError('E_ARG', `must be a decimal number, got ${JSON.stringify(text)}`, flag);
  }
  return value;
}

/**
 * The value of an integer command-line flag: {@link parseNumberFlag}, then a safe integer ≥ `min`.
 *
 * @throws LetheError `E_ARG` naming `flag` and quoting `text` otherwise.
 */
export function parseIntegerFlag(text: string, flag: string, min: number): number {
  const value = parseNumberFlag(text, flag);
  if (!(Number.isSafeInteger(value) && value >= min)) {
    throw new LetheError('E_ARG', `must be an integer ≥ ${min}, got ${JSON.stringify(text)}`, flag);
  }
  return value;
}
