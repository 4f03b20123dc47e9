import { LetheError } from '@lethe/core';

/**
 * The fields of a task's options object, checked against the fields the task knows. `undefined`
 * counts as absent.
 *
 * @throws LetheError `E_ARG` (argument `options`) when `raw` is not a plain object or
 *   `undefined`, or (argument = the field) for a field outside `allowed`.
 */
export function optionFields(
  raw: unknown,
  allowed: readonly string[],
  task: string,
): Readonly<Record<string, unknown>> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new LetheError('E_ARG', `options of ${task} must be an object`, 'options');
  }
  const fields = raw as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (fields[name] !== undefined && !allowed.includes(name)) {
      throw new LetheError(
        'E_ARG',
        `unknown option of ${task}; valid options: ${allowed.join(', ')}`,
        name,
      );
    }
  }
  return fields;
}

/**
 * Integer option `name` in `[min, max]`, or `fallback` when absent.
 *
 * @throws LetheError `E_ARG` naming the field otherwise.
 */
export function intOption(
  fields: Readonly<Record<string, unknown>>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  return boundedNumber(fields, name, fallback, [min, max], 'an integer');
}

/**
 * Finite number option `name` in `[min, max]`, or `fallback` when absent.
 *
 * @throws LetheError `E_ARG` naming the field otherwise.
 */
export function numberOption(
  fields: Readonly<Record<string, unknown>>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  return boundedNumber(fields, name, fallback, [min, max], 'a number');
}

function boundedNumber(
  fields: Readonly<Record<string, unknown>>,
  name: string,
  fallback: number,
  [min, max]: readonly [number, number],
  kind: 'an integer' | 'a number',
): number {
  const value = fields[name];
  if (value === undefined) return fallback;
  const wellTyped =
    typeof value === 'number' &&
    (kind === 'an integer' ? Number.isInteger(value) : Number.isFinite(value));
  if (!wellTyped || value < min || value > max) {
    throw new LetheError(
      'E_ARG',
      `must be ${kind} in [${min}, ${max}], got ${describe(value)}`,
      name,
    );
  }
  return value;
}

/**
 * Option `name` that must be one of `choices`, or `fallback` when absent.
 *
 * @throws LetheError `E_ARG` naming the field and listing the choices otherwise.
 */
export function choiceOption<const T extends string | number>(
  fields: Readonly<Record<string, unknown>>,
  name: string,
  fallback: T,
  choices: readonly T[],
): T {
  const value = fields[name];
  if (value === undefined) return fallback;
  if (!choices.includes(value as T)) {
    throw new LetheError(
      'E_ARG',
      `must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${describe(value)}`,
      name,
    );
  }
  return value as T;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null)
    return String(value);
  return typeof value;
}
