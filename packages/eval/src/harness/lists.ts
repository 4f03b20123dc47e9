import { LetheError } from '@lethe/core';

/**
 * Checks that `value` is a non-empty array.
 *
 * @throws LetheError `E_ARG` naming `argument` otherwise.
 */
export function nonEmptyList(value: unknown, argument: string): unknown[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array', argument);
  }
  return value;
}

/**
 * Refuses a list that holds a value twice.
 *
 * @throws LetheError `E_ARG` naming `argument(i)` of the later entry, with the earlier one's index.
 */
export function rejectDuplicates<T>(values: readonly T[], argument: (i: number) => string): void {
  values.forEach((value, i) => {
    const first = values.indexOf(value);
    if (first !== i) {
      throw new LetheError(
        'E_ARG',
        `repeats entry ${first} (${JSON.stringify(value)})`,
        argument(i),
      );
    }
  });
}
