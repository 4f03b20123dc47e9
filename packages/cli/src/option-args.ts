import type { Command } from 'commander';

/** A flag declared on a commander command from a flag table (`EVAL_FLAGS`, `PRETRAIN_FLAGS`). */
export interface TableFlag {
  readonly flag: string;
  readonly description: string;
  readonly repeatable?: boolean;
}

/**
 * Declares each flag of `flags` on `command` as `--flag <value>` (string values, no defaults;
 * a repeatable flag collects its values), so the table's own parser sees the values as typed.
 */
export function declareFlags(command: Command, flags: readonly TableFlag[]): Command {
  for (const { flag, description, repeatable } of flags) {
    if (repeatable) {
      command.option(`${flag} <value>`, description, (value: string, previous: string[] = []) => [
        ...previous,
        value,
      ]);
    } else {
      command.option(`${flag} <value>`, description);
    }
  }
  return command;
}

/**
 * The flags of `flags` that were given on `command`'s command line, back as `--flag value`
 * pairs (a repeatable flag once per value), in table order: the input of the table's parser.
 */
export function givenFlagArgs(command: Command, flags: readonly TableFlag[]): string[] {
  const args: string[] = [];
  for (const { flag } of flags) {
    const option = command.options.find((o) => o.long === flag);
    if (option === undefined) continue;
    const value: unknown = command.getOptionValue(option.attributeName());
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) args.push(flag, String(item));
  }
  return args;
}
