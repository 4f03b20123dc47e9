import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built binary (turbo builds the package before its tests). */
export const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');

/** Throws a clear error when the binary has not been built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build the package first (pnpm exec tsup)`);
  }
}

/** What a child process printed and how it ended. */
export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `file args` in `cwd` with stdin = `input` (empty: EOF at once), collecting its output. */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; input?: string; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: undefined, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs `lethe args` (the built binary under this Node) in `cwd`. */
export function lethe(args: readonly string[], cwd: string, input?: string): Promise<Run> {
  return run(process.execPath, [CLI, ...args], { cwd, input });
}

/**
 * Writes an executable `lethe` shim into `bin` that runs the built binary, so that a printed
 * `lethe …` command line can be run by a shell as it is.
 */
export async function installShim(bin: string): Promise<void> {
  const shim = join(bin, 'lethe');
  await writeFile(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  await chmod(shim, 0o755);
}

/**
 * The rows of `task` in a printed results table without the throughput column (the one that
 * differs between identical runs): what a pooled or queued sweep must print as one thread does.
 */
export function timelessRows(stdout: string, task: string): string[][] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith(`| ${task} |`))
    .map((line) => line.split(' | ').filter((_, column) => column !== 10));
}
