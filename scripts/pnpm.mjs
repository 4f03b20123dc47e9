#!/usr/bin/env node
// Runs the pnpm version pinned in package.json#packageManager. Uses a pnpm already on PATH
// when it is that exact version; otherwise runs it through `npx` from the npm registry
// (corepack is not used: its signature check fails against some registries). SIGINT, SIGTERM and
// SIGHUP are passed on to everything it started, and after one it exits once all of that has.
// When stdout is not a terminal (a CI log, `npm test > log`) it sets NO_COLOR for pnpm and what it
// runs (turbo, tsup, vitest: they colour under CI=true even when piped), unless NO_COLOR or
// FORCE_COLOR is already set, so redirected logs carry no ANSI colour codes.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pinned = packageManager.replace(/^pnpm@/, '');
const shell = process.platform === 'win32';

const local = spawnSync('pnpm', ['--version'], { encoding: 'utf8', shell });
const useLocal = local.status === 0 && local.stdout.trim() === pinned;
const [cmd, args] = useLocal
  ? ['pnpm', process.argv.slice(2)]
  : ['npx', ['--yes', `pnpm@${pinned}`, ...process.argv.slice(2)]];
const env = { ...process.env };
if (!process.stdout.isTTY && env.NO_COLOR === undefined && env.FORCE_COLOR === undefined) {
  env.NO_COLOR = '1';
}
// Its own process group (not on Windows), so that a signal reaches everything it started: npx,
// the shell npx runs pnpm in, pnpm, and the script pnpm runs, as Ctrl-C in a terminal does.
const child = spawn(cmd, args, {
  stdio: 'inherit',
  cwd: process.cwd(),
  shell,
  env,
  detached: !shell,
});
let forwarded = false;
// A signal for this launcher is meant for what it runs (`docker stop`, Ctrl-C on a server).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    forwarded = true;
    try {
      if (shell) child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  });
}
/** Whether a process of the child's group is still running. */
function groupRunning() {
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
}
child.on('exit', async (code, signal) => {
  // After a forwarded signal, wait for the whole group: a server drains after its launchers exit,
  // and a container whose first process exits takes the server down with it.
  while (forwarded && !shell && groupRunning()) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.exit(code ?? (signal === null ? 1 : 128 + (signal === 'SIGINT' ? 2 : 15)));
});
