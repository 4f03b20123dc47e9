#!/usr/bin/env node
// Runs the pnpm version pinned in package.json#packageManager. Uses a pnpm already on PATH
// when it is that exact version; otherwise runs it through `npx` from the npm registry
// (corepack is not used: its signature check fails against some registries).
// When stdout is not a terminal (a CI log, `npm test > log`) it sets NO_COLOR for pnpm and what it
// runs (turbo, tsup, vitest: they colour under CI=true even when piped), unless NO_COLOR or
// FORCE_COLOR is already set, so redirected logs carry no ANSI colour codes.
import { spawnSync } from 'node:child_process';
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
const run = spawnSync(cmd, args, { stdio: 'inherit', cwd: process.cwd(), shell, env });
process.exit(run.status ?? 1);
