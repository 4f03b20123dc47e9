#!/usr/bin/env node
// Runs the pnpm version pinned in package.json#packageManager. Uses a pnpm already on PATH
// when it is that exact version; otherwise runs it through `npx` from the npm registry
// (corepack is not used: its signature check fails against some registries).
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
const run = spawnSync(cmd, args, { stdio: 'inherit', cwd: process.cwd(), shell });
process.exit(run.status ?? 1);
