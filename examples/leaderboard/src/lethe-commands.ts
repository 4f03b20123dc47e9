import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LetheError } from '@lethe/core';

/**
 * The labels of a sweep's suite tasks (`"name": "suite"`, one per member), in its order: what the
 * report averages per budget (`lethe report --average-over`).
 *
 * @throws LetheError `E_ARG` naming `file` when the sweep has no `tasks` list.
 */
export function averagedTasks(sweep: unknown, file: string): string[] {
  const tasks = (sweep as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(tasks)) {
    throw new LetheError('E_ARG', 'is not a sweep: it has no "tasks" list', file);
  }
  return tasks.flatMap((task: unknown) => {
    if (typeof task !== 'object' || task === null) return [];
    const { name, label } = task as { name?: unknown; label?: unknown };
    if (name !== 'suite') return [];
    return [typeof label === 'string' ? label : name];
  });
}

/** The `lethe` CLI's entry: the bin of `@lethe/cli`. */
function letheBin(): string {
  const manifest = createRequire(import.meta.url).resolve('@lethe/cli/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { lethe: string } };
  return join(dirname(manifest), bin.lethe);
}

/**
 * Runs `lethe <args>` in this process's directory, its output on this terminal (progress bars
 * included); a failure ends this process with the CLI's exit code, after the CLI's own one-line
 * error.
 */
export function runLethe(args: readonly string[]): void {
  const run = spawnSync(process.execPath, [letheBin(), ...args], { stdio: 'inherit' });
  if (run.error !== undefined) throw run.error;
  if (run.status !== 0) process.exit(run.status ?? 1);
}
