import { InvalidArgumentError } from 'commander';

/** Commander parser of an integer flag value. */
export function integer(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n))
    throw new InvalidArgumentError('must be an integer');
  return n;
}

/** Commander parser of a finite number. */
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
