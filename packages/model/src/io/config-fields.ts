import { LetheError } from '@lethe/core';

/** A config object being validated: field name to raw JSON value. */
export type RawConfig = Record<string, unknown>;

/** `raw[field]` as a positive integer, or `fallback` when absent/null. */
export function positiveInteger(raw: RawConfig, field: string, fallback?: number): number {
  const value = raw[field] ?? fallback;
  if (value === undefined) throw new LetheError('E_ARG', 'is required', field);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${JSON.stringify(value)}`,
      field,
    );
  }
  return value;
}

/** `raw[field]` as a finite number > 0, or `fallback` when absent/null. */
export function positiveNumber(raw: RawConfig, field: string, fallback: number): number {
  const value = raw[field] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new LetheError(
      'E_ARG',
      `must be a finite number > 0, got ${JSON.stringify(value)}`,
      field,
    );
  }
  return value;
}

/** `raw[field]` as a boolean, or `fallback` when absent/null. */
export function booleanField(raw: RawConfig, field: string, fallback: boolean): boolean {
  const value = raw[field] ?? fallback;
  if (typeof value !== 'boolean') {
    throw new LetheError('E_ARG', `must be a boolean, got ${JSON.stringify(value)}`, field);
  }
  return value;
}

/** Throws unless `raw[field]` is absent, null, or a token id (or list of ids) below `vocab`. */
export function checkTokenIds(
  raw: RawConfig,
  field: string,
  vocab: number,
  allowList: boolean,
): void {
  const value = raw[field];
  if (value === undefined || value === null) return;
  const ids = allowList && Array.isArray(value) ? value : [value];
  for (const id of ids) {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0 || id >= vocab) {
      throw new LetheError(
        'E_ARG',
        `must be a token id in [0, ${vocab})${allowList ? ' or a list of them' : ''}, got ${JSON.stringify(value)}`,
        field,
      );
    }
  }
}

/** Throws unless `raw[field]` is absent or a string. */
export function checkOptionalString(raw: RawConfig, field: string): void {
  const value = raw[field];
  if (value !== undefined && typeof value !== 'string') {
    throw new LetheError('E_ARG', `must be a string, got ${JSON.stringify(value)}`, field);
  }
}

/** Throws unless `raw[field]` is absent or an array of strings. */
export function checkOptionalStringList(raw: RawConfig, field: string): void {
  const value = raw[field];
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
    throw new LetheError(
      'E_ARG',
      `must be an array of strings, got ${JSON.stringify(value)}`,
      field,
    );
  }
}

/**
 * Throws unless the RoPE settings in `raw[field]` (HF `rope_scaling` / `rope_parameters`)
 * are absent, null, or of `rope_type` "default": scaled RoPE variants are not implemented,
 * and loading them as plain RoPE would give silently wrong results.
 */
export function checkDefaultRope(raw: RawConfig, field: string): void {
  const value = raw[field];
  if (value === undefined || value === null) return;
  const settings = typeof value === 'object' && !Array.isArray(value) ? (value as RawConfig) : {};
  const type = settings.rope_type ?? settings.type;
  if (type !== 'default') {
    throw new LetheError(
      'E_ARG',
      `only default RoPE is supported, got rope_type ${JSON.stringify(type)}`,
      field,
    );
  }
}
