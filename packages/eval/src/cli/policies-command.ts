import { describePolicyOptions } from '@lethe/kv-cache';
import type { Command } from 'commander';
import { createDefaultRegistry } from '../harness/default-registry';

/** One provider as `lethe policies --json` prints it. */
export interface PolicyListing {
  readonly name: string;
  readonly summary: string;
  /** Whether it loads trained parameters (`--policy-dir`). */
  readonly learned: boolean;
  readonly options: readonly { name: string; default: unknown; description?: string }[];
}

/** Every registered provider with its options, defaults and descriptions. */
export function listPolicies(): PolicyListing[] {
  return createDefaultRegistry()
    .list()
    .map((provider) => ({
      name: provider.name,
      summary: provider.summary,
      learned: provider.learned !== undefined,
      options: describePolicyOptions(provider.options).map((option) => ({
        name: option.name,
        default: option.default,
        ...(option.description === undefined ? {} : { description: option.description }),
      })),
    }));
}

/** The listing as text: a paragraph per provider, an indented line per option. */
export function formatPolicies(listings: readonly PolicyListing[]): string {
  const lines: string[] = [];
  for (const policy of listings) {
    const learned = policy.learned ? ' [learned: needs --policy-dir]' : '';
    lines.push(`${policy.name}${learned}`, `  ${policy.summary}`);
    for (const option of policy.options) {
      const fallback =
        option.default === undefined ? '' : ` (default ${JSON.stringify(option.default)})`;
      lines.push(
        `    ${option.name}${fallback}${option.description === undefined ? '' : `: ${option.description}`}`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** Adds `lethe policies`: every registered policy with its options (`--json` for machines). */
export function addPoliciesCommand(program: Command): void {
  program
    .command('policies')
    .summary('list every policy and its options')
    .description(
      'List every registered policy provider: what it is, whether it is learned (then it needs ' +
        '--policy-dir), and its options with their defaults, as `lethe eval --policy NAME ' +
        '--policy-options JSON` takes them.',
    )
    .option('--json', 'print the listing as JSON')
    .action((opts: { json?: boolean }) => {
      const listings = listPolicies();
      process.stdout.write(
        opts.json ? `${JSON.stringify(listings, null, 2)}\n` : formatPolicies(listings),
      );
    });
}
