import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
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
 * included), and resolves when it ends; a failure ends this process with the CLI's exit code,
 * after the CLI's own one-line error. SIGINT and SIGTERM sent to this process are passed on to
 * the CLI, which stops as it does on Ctrl-C (`lethe eval` after saving its finished cells): a
 * `kill` of this process alone never leaves the CLI running on, writing the results file.
 */
export async function runLethe(args: readonly string[]): Promise<void> {
  // Its own process group (POSIX): a Ctrl-C on the terminal reaches this process alone, which
  // passes it on once; a second SIGINT would make the CLI exit at once, mid-cell.
  const child = spawn(process.execPath, [letheBin(), ...args], {
    stdio: 'inherit',
    detached: process.platform !== 'win32',
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    const status = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        resolve(signal === null ? code : 128 + signalNumber(signal)),
      );
    });
    if (status !== 0) process.exit(status ?? 1);
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

/** The number of a signal (SIGINT 2, SIGTERM 15, …), for the shell's 128 + n exit status. */
function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
