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
