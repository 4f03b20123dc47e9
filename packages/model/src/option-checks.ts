import { LetheError } from '@lethe/core';

/**
 * Throws `E_ARG` naming `argument` unless `value` is a non-null object (an options bag, a
 * policy, a set of files).
 */
export function checkObject(value: unknown, argument: string, expected = 'an object'): void {
  if (typeof value !== 'object' || value === null) {
    throw new LetheError('E_ARG', `must be ${expected}, got ${kindOf(value)}`, argument);
  }
}

/** Throws `E_ARG` naming `argument` unless `value` is undefined or a function. */
export function checkOptionalFunction(value: unknown, argument: string): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new LetheError('E_ARG', `must be a function, got ${kindOf(value)}`, argument);
  }
}

/**
 * Throws `E_ARG` naming `argument` unless `value` is an object whose `methods` are all
 * functions (a structural check of an interface such as `EvictionPolicy`).
 *
 * @param interfaceName with its article, e.g. `an EvictionPolicy`.
 */
export function checkMethods(
  value: unknown,
  methods: readonly string[],
  argument: string,
  interfaceName: string,
): void {
  checkObject(value, argument, interfaceName);
  for (const method of methods) {
    if (typeof (value as Record<string, unknown>)[method] !== 'function') {
      throw new LetheError(
        'E_ARG',
        `must be ${interfaceName}: ${method}() must be a method`,
        argument,
      );
    }
  }
}

/** A short description of a value's kind for error messages: `null`, `number`, `Array`, … */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'an object';
}
