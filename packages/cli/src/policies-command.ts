import { listPolicies, type PolicyListing } from '@lethe/eval';
import { createDefaultRegistry } from '@lethe/policies';
import type { Command } from 'commander';

/** The listing as text: a paragraph per provider, an indented line per option. */
export function formatPolicies(listings: readonly PolicyListing[]): string {
  const lines: string[] = [];
  for (const policy of listings) {
    const learned = policy.learned ? ' [learned: needs --policy-dir]' : '';
    lines.push(
      `${policy.name}${learned}`,
      `  ${policy.summary}`,
      `  budgets: ${policy.budgetForms.join(', ')}`,
    );
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
        '--policy-dir), the budget forms it takes, and its options with their defaults, as ' +
        '`lethe eval --policy NAME --policy-options JSON` takes them.',
    )
    .option('--json', 'print the listing as JSON')
    .action((opts: { json?: boolean }) => {
      const listings = listPolicies(createDefaultRegistry());
      process.stdout.write(
        opts.json ? `${JSON.stringify(listings, null, 2)}\n` : formatPolicies(listings),
      );
    });
}
