#!/usr/bin/env node
// `npm run demo`: installs the workspace, builds the packages and runs the main job
// (examples/main-job), saying before each step what it does and after it how long it took. The
// build shows turbo's output of each package it builds (a line per package when cached).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const pnpm = join(root, 'scripts', 'pnpm.mjs');

const steps = [
  {
    what: 'installing the workspace (pinned pnpm, frozen lockfile)',
    args: ['install', '--frozen-lockfile'],
  },
  {
    what: 'building the packages (turbo; about 2 min on 2 cores the first time, seconds once cached)',
    args: ['exec', 'turbo', 'run', 'build', '--output-logs=new-only'],
  },
  {
    what: 'running the main job, examples/main-job/sweep.json (2½–6½ min on 2 cores, by machine; finished cells are not recomputed: delete examples/main-job/out to start afresh)',
    args: ['--filter', '@lethe/example-main-job', 'start'],
  },
];

const started = performance.now();
for (const [i, step] of steps.entries()) {
  console.log(`\ndemo ${i + 1}/${steps.length}: ${step.what}`);
  const t = performance.now();
  const run = spawnSync(process.execPath, [pnpm, ...step.args], { cwd: root, stdio: 'inherit' });
  const seconds = ((performance.now() - t) / 1000).toFixed(0);
  if (run.status !== 0) {
    console.error(`demo ${i + 1}/${steps.length} failed after ${seconds} s (exit ${run.status})`);
    process.exit(run.status ?? 1);
  }
  console.log(`demo ${i + 1}/${steps.length}: done in ${seconds} s`);
}
console.log(
  `\ndemo: done in ${((performance.now() - started) / 1000).toFixed(0)} s; report in examples/main-job/out/report/`,
);
