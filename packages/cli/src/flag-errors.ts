import { bareMessage, LetheError } from '@lethe/core';
import { EVAL_FLAGS } from '@lethe/eval';

/**
 * Re-issues a `LetheError` about a configuration field (`budgets[0]`, `modelSize.hidden`) so
 * that it names the command-line flag that set it too: `[E_BUDGET] --budget (budgets[0]): …`.
 * Errors about anything else are returned unchanged.
 *
 * @param flagOf - the flag of a field, or `undefined` when no flag sets it.
 */
export function nameFlag(error: unknown, flagOf: (field: string) => string | undefined): unknown {
  if (!(error instanceof LetheError) || error.argument === undefined) return error;
  const flag = flagOf(error.argument);
  if (flag === undefined || flag === error.argument) return error;
  return new LetheError(error.code, bareMessage(error), `${flag} (${error.argument})`);
}

/** The flag that sets each field of a composition's part. */
const PART_FLAGS: Readonly<Record<string, string>> = {
  name: '--policy',
  options: '--policy-options',
  dir: '--policy-dir',
  budget: '--part-budgets',
};

/**
 * The flag of a single-cell sweep field (`budgets[0]` → `--budget`), per `EVAL_FLAGS`: what
 * `lethe eval` and `lethe generate` name in their errors.
 */
export function evalFlagOf(field: string): string | undefined {
  const match = /^tasks\[0\]\.options\.(.+)$/.exec(field);
  if (match !== null) return `--task-options ${match[1]}`;
  const option = /^policies\[0\]\.options\.(.+)$/.exec(field);
  if (option !== null) return `--policy-options ${option[1]}`;
  const part = /^policies\[0\]\.compose\[\d+\]\.(name|options|dir|budget)(?:\.(.+))?$/.exec(field);
  if (part !== null) {
    const flag = PART_FLAGS[part[1]!]!;
    return part[2] === undefined ? flag : `${flag} ${part[2]}`;
  }
  if (field.startsWith('checkpoints.')) return '--checkpoint';
  return EVAL_FLAGS.find((f) => f.field === field)?.flag;
}
