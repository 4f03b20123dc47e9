import { LetheError } from '@lethe/core';
import { getDefault, getDescription, type InferOutput, safeParse } from 'valibot';
import type { PolicyOptionsSchema } from './provider';

/** One option of a provider, as `lethe policies` lists it. */
export interface OptionDescription {
  /** Option key. */
  readonly name: string;
  /** Its default (`undefined` when the option has none: left out, it is not set). */
  readonly default: unknown;
  /** What it does, from the schema's `description`. */
  readonly description: string | undefined;
}

/**
 * Validates a provider's options and fills their defaults.
 *
 * @param raw The options as given (e.g. parsed `--policy-options` JSON); `undefined` means `{}`.
 * @param argument Name of the options in messages (default `options`).
 * @throws LetheError `E_ARG` naming `<argument>.<path>` of the first bad option (an unknown key,
 *   a wrong type, a value out of range), with the schema's message.
 */
export function parsePolicyOptions<S extends PolicyOptionsSchema>(
  schema: S,
  raw: unknown,
  argument = 'options',
): InferOutput<S> {
  const result = safeParse(schema, raw ?? {});
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = (issue.path ?? []).map((item) => String(item.key)).join('.');
  throw new LetheError('E_ARG', issue.message, path === '' ? argument : `${argument}.${path}`);
}

/** The options of a schema with their defaults and descriptions, in declaration order. */
export function describePolicyOptions(schema: PolicyOptionsSchema): OptionDescription[] {
  return Object.entries(schema.entries).map(([name, entry]) => ({
    name,
    default: getDefault(entry as Parameters<typeof getDefault>[0]),
    description: getDescription(entry as Parameters<typeof getDescription>[0]),
  }));
}
