import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PolicyRegistry, PreparedPolicy } from '@lethe/kv-cache';
import { writeFileAtomic } from '@lethe/model/node';
import { nodePolicyStore } from '@lethe/policies/node';
import { type ActionSet, type SolLoaded, solProvider } from '@lethe/policies-sol';

/**
 * A SOL policy directory prepared by the registry's `sol` provider, with the action set its
 * controller was trained on (the baselines run the same); `release()` the policy when done.
 *
 * @throws LetheError as the policy store and the `sol` provider.
 */
export async function openSolPolicy(
  registry: PolicyRegistry,
  dir: string,
): Promise<{
  readonly sol: PreparedPolicy;
  readonly actions: ActionSet;
  readonly horizon: number;
}> {
  const directory = await nodePolicyStore().open(dir);
  const sol = await registry.prepare('sol', { directory });
  const { actions } = (await solProvider.learned!.load(directory)) as SolLoaded;
  return { sol, actions, horizon: sol.options.horizon as number };
}

/**
 * Writes a study's record as `<out>/<name>.json` and its tables as `<out>/<name>.md` (each
 * atomically, `out` created if needed), and prints the tables.
 */
export async function writeStudy(
  out: string,
  name: string,
  record: object,
  markdown: string,
): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFileAtomic(join(out, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  await writeFileAtomic(join(out, `${name}.md`), markdown);
  process.stdout.write(markdown);
}
