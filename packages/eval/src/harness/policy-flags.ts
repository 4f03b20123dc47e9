import { LetheError } from '@lethe/core';
import { COMPOSITION_SEPARATOR } from '@lethe/kv-cache';
import { parseJsonFlag } from './json';
import type { PolicyPartSpec, PolicySpec } from './policy-spec';

/** The policy flags of a command line, as given (`lethe eval`, `lethe generate`). */
export interface PolicyFlags {
  /** `--policy`: a provider name, or names joined by `+` for a composition. */
  readonly policy: string;
  /** `--policy-options` (JSON). */
  readonly options?: string;
  /** `--policy-dir`: a directory, or for a composition a JSON object of directories by part. */
  readonly dir?: string;
  /** `--part-budgets`: for a composition, a JSON object of kept fractions by part. */
  readonly partBudgets?: string;
  /** `--policy-label`. */
  readonly label?: string;
  /** `--policy-transfer`: `true` or `false`. */
  readonly transfer?: string;
}

/**
 * The sweep `policies` entry the policy flags denote (read by `policySpec`): a single policy, or
 * — for a name joined by `+` — a composition whose parts take their options, directories and
 * budgets from the JSON objects of `--policy-options`, `--policy-dir` and `--part-budgets` by
 * part name; `--policy-transfer` sets the entry's `transfer`.
 *
 * @throws LetheError `E_ARG` naming the flag for malformed JSON, a value that is not an object
 *   (composition), or a part name that is not one of the composition's; `--part-budgets` for a
 *   single policy; `--policy-transfer` for a value other than `true` or `false`.
 */
export function policyFlagEntry(flags: PolicyFlags): Record<string, unknown> {
  const { policy: name } = flags;
  // The entry's own fields, beside its policy's or its parts'.
  const entryFields = {
    ...(flags.label === undefined ? {} : { label: flags.label }),
    ...(flags.transfer === undefined ? {} : { transfer: transferFlag(flags.transfer) }),
  };
  const options = parseJsonFlag(flags.options, '--policy-options');
  if (!name.includes(COMPOSITION_SEPARATOR)) {
    if (flags.partBudgets !== undefined) {
      throw new LetheError(
        'E_ARG',
        `is for a composition (names joined by +), not "${name}"`,
        '--part-budgets',
      );
    }
    return {
      name,
      options: options ?? {},
      ...(flags.dir === undefined ? {} : { dir: flags.dir }),
      ...entryFields,
    };
  }
  const names = name.split(COMPOSITION_SEPARATOR);
  const byPart = (value: unknown, flag: string): Record<string, unknown> => {
    if (value === undefined) return {};
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new LetheError('E_ARG', 'must be a JSON object by part name for a composition', flag);
    }
    for (const key of Object.keys(value)) {
      if (!names.includes(key)) {
        throw new LetheError('E_ARG', `names "${key}", not a part of ${name}`, flag);
      }
    }
    return value as Record<string, unknown>;
  };
  const partOptions = byPart(options, '--policy-options');
  const dirs = byPart(parseJsonFlag(flags.dir, '--policy-dir'), '--policy-dir');
  const budgets = byPart(parseJsonFlag(flags.partBudgets, '--part-budgets'), '--part-budgets');
  return {
    compose: names.map((part) => ({
      name: part,
      ...(partOptions[part] === undefined ? {} : { options: partOptions[part] }),
      ...(dirs[part] === undefined ? {} : { dir: dirs[part] }),
      ...(budgets[part] === undefined ? {} : { budget: budgets[part] }),
    })),
    ...entryFields,
  };
}

/** The value of `--policy-transfer`. */
function transferFlag(value: string): boolean {
  if (value === 'true' || value === 'false') return value === 'true';
  throw new LetheError(
    'E_ARG',
    `must be true or false, got ${JSON.stringify(value)}`,
    '--policy-transfer',
  );
}

/**
 * The words of `--policy` and those of `--policy-options`, `--policy-dir`, `--part-budgets` and
 * `--policy-transfer` with something to say that give `spec` back through
 * {@link policyFlagEntry} (its label aside): a single policy's own values; for a composition,
 * JSON objects by part name.
 */
export function policyFlagWords(spec: PolicySpec): string[] {
  const words = ['--policy', spec.name];
  if (spec.compose === undefined) {
    if (Object.keys(spec.options).length > 0) {
      words.push('--policy-options', JSON.stringify(spec.options));
    }
    if (spec.dir !== null) words.push('--policy-dir', spec.dir);
    if (spec.transfer) words.push('--policy-transfer', 'true');
    return words;
  }
  const byPart = <T>(value: (part: PolicyPartSpec) => T | undefined) =>
    Object.fromEntries(
      spec.compose!.flatMap((part) => {
        const v = value(part);
        return v === undefined ? [] : [[part.name, v]];
      }),
    );
  const options = byPart((p) => (Object.keys(p.options).length > 0 ? p.options : undefined));
  const dirs = byPart((p) => p.dir ?? undefined);
  const budgets = byPart((p) => p.budget ?? undefined);
  if (Object.keys(options).length > 0) words.push('--policy-options', JSON.stringify(options));
  if (Object.keys(dirs).length > 0) words.push('--policy-dir', JSON.stringify(dirs));
  if (Object.keys(budgets).length > 0) words.push('--part-budgets', JSON.stringify(budgets));
  if (spec.transfer) words.push('--policy-transfer', 'true');
  return words;
}
