// Runs a job of the workspace in steps through the pinned pnpm (scripts/pnpm.mjs), saying
// before each step what it does and after it how long it took; the first failing step ends the
// process with its exit code. Used by `npm run demo` and `npm run leaderboard`.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const pnpm = join(root, 'scripts', 'pnpm.mjs');

/** The steps every job starts with: the workspace installed and its packages built. */
export const SET_UP = [
  {
    what: 'installing the workspace (pinned pnpm, frozen lockfile)',
    args: ['install', '--frozen-lockfile'],
  },
  {
    what: 'building the packages (turbo; about 2 min on 2 cores the first time, seconds once cached)',
    args: ['exec', 'turbo', 'run', 'build', '--output-logs=new-only'],
  },
];

/**
 * Runs `steps` (`{ what, args }`: pnpm arguments) in order from the repository root, then prints
 * `<job>: done in N s; <done>`.
 */
export function runSteps(job, steps, done) {
  const started = performance.now();
  for (const [i, step] of steps.entries()) {
    console.log(`\n${job} ${i + 1}/${steps.length}: ${step.what}`);
    const t = performance.now();
    const run = spawnSync(process.execPath, [pnpm, ...step.args], { cwd: root, stdio: 'inherit' });
    const seconds = ((performance.now() - t) / 1000).toFixed(0);
    if (run.status !== 0) {
      console.error(
        `${job} ${i + 1}/${steps.length} failed after ${seconds} s (exit ${run.status})`,
      );
      process.exit(run.status ?? 1);
    }
    console.log(`${job} ${i + 1}/${steps.length}: done in ${seconds} s`);
  }
  console.log(`\n${job}: done in ${((performance.now() - started) / 1000).toFixed(0)} s; ${done}`);
}
