import { InvalidArgumentError } from 'commander';

/** Commander parser of a repeatable `label=directory` flag, collecting `[label, directory]` pairs. */
export function labelledDirectory(
  value: string,
  previous: readonly [string, string][],
): [string, string][] {
  const at = value.indexOf('=');
  if (at < 1 || at === value.length - 1) throw new InvalidArgumentError('must be label=directory');
  return [...previous, [value.slice(0, at), value.slice(at + 1)]];
}

/** Commander parser of a comma-separated list of labels. */
export function labels(value: string): string[] {
  return value.split(',');
}

/** Commander parser of a comma-separated list of labels, where `none` is the empty list. */
export function labelsOrNone(value: string): string[] {
  return value === 'none' ? [] : labels(value);
}

/** Commander parser of an integer flag. */
export function integer(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n))
    throw new InvalidArgumentError('must be an integer');
  return n;
}

/** Commander parser of an integer flag that must be at least 1. */
export function positiveInteger(value: string): number {
  const n = integer(value);
  if (n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** Commander parser of a finite number flag. */
export function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError('must be a number');
  return n;
}

/** Commander parser of a comma-separated list of finite numbers. */
export function numbers(value: string): number[] {
  return value.split(',').map(number);
}

/** Commander parser of an eviction rate in (0, 1]. */
export function rate(value: string): number {
  const n = number(value);
  if (!(n > 0 && n <= 1)) throw new InvalidArgumentError(`rate ${n} must be in (0, 1]`);
  return n;
}

/** Commander parser of a comma-separated list of eviction rates, each in (0, 1]. */
export function rates(value: string): number[] {
  return value.split(',').map(rate);
}

/** Commander parser of comma-separated `b:w` pairs of integers (block size and window). */
export function blockWindowPairs(value: string): { blockSize: number; window: number }[] {
  return value.split(',').map((pair) => {
    const parts = pair.split(':');
    if (parts.length !== 2) throw new InvalidArgumentError(`"${pair}" is not b:w`);
    return { blockSize: positiveInteger(parts[0]!), window: positiveInteger(parts[1]!) };
  });
}
