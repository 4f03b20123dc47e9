import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  checkpointOf,
  knownPolicies,
  SUITE_MEMBERS,
  suiteBpeTokenizer,
  TASK_NAMES,
  validateSweepConfig,
} from '@lethe/eval';
import { DecoderModel, modelIdentity } from '@lethe/model';
import { readModelDirectory, writeModelDirectory } from '@lethe/model/node';
import { createDefaultRegistry } from '@lethe/policies';
import { taskModelConfig } from '@lethe/task-models';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { skipWithoutRedis, startTestRedis } from '@lethe/test-utils/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { averagedTasks } from '../src/lethe-commands';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const registry = createDefaultRegistry();
const raw = JSON.parse(readFileSync(join(root, 'sweep.json'), 'utf8'));
const sweep = validateSweepConfig(raw, { ...knownPolicies(registry), tasks: TASK_NAMES });

/**
 * Registered policies the leaderboard does not run yet, and why: the learned ones need a policy
 * directory trained on the suite's backbone (its two lines' models, named in sweep.json), which
 * SOL has not yet; SOL's other baselines are the SOL study's (examples/sol-lm).
 */
const AWAITING_BACKBONE = ['sol'];
const STUDY_ONLY = ['sol-random', 'sol-random-steered', 'sol-emc', 'sol-dac'];

/**
 * `npm start` without npm: the leaderboard in this process, tsx as a loader. (The `tsx` CLI would
 * run it in a child and SIGKILL that child when it is slow to report a relayed signal, as under
 * load, leaving the evaluation it started running on.)
 */
const START = ['--import', 'tsx', 'src/leaderboard.ts'];

/** The pids of the running processes whose command line contains `text` (Linux's /proc). */
function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(join('/proc', entry, 'cmdline'), 'utf8');
    } catch {
      continue; // ended while listed
    }
    if (commandLine.includes(text)) pids.push(Number(entry));
  }
  return pids;
}

/** The `lethe` CLI the leaderboard runs. */
const LETHE = join(
  dirname(fileURLToPath(import.meta.resolve('@lethe/cli/package.json'))),
  'dist',
  'cli.js',
);

/** A results file's cells without what depends on the clock: wall time and throughput. */
function timelessCells(path: string): unknown[] {
  const { cells } = JSON.parse(readFileSync(path, 'utf8')) as {
    cells: { elapsedMs: number; metrics: { tokensPerSecond: unknown } }[];
  };
  return cells.map(({ elapsedMs: _elapsed, metrics, ...rest }) => {
    const { tokensPerSecond: _speed, ...measured } = metrics;
    return { ...rest, metrics: measured };
  });
}

describe('the leaderboard sweep', () => {
  it('runs every member of the suite, labelled by its name, on the model trained for it', () => {
    expect(sweep.tasks.map((task) => task.label)).toEqual([...SUITE_MEMBERS]);
    const trainedOn = new Map<string, string>();
    for (const task of sweep.tasks) {
      expect(task.name).toBe('suite');
      expect(task.options.member).toBe(task.label);
      const dir = join(root, checkpointOf(sweep, task.label!)!);
      const manifest = JSON.parse(readFileSync(join(dir, 'lethe-model.json'), 'utf8'));
      expect(manifest.task.name).toBe('suite');
      trainedOn.set(task.label!, manifest.task.resolved.member);
    }
    // Verbose Countdown on the Countdown line, the retrieval members on the retrieval line.
    for (const [member, mixture] of trainedOn) {
      expect(mixture, member).toBe(member === 'countdown-verbose' ? member : 'retrieval-mixture');
    }
    expect(averagedTasks(raw, 'sweep.json')).toEqual([...SUITE_MEMBERS]);
  });

  it("runs its models of one family: the suite's tokenizer and one architecture", () => {
    const dirs = [...new Set(sweep.tasks.map((task) => checkpointOf(sweep, task.label!)!))];
    expect(dirs).toHaveLength(2);
    const file = (dir: string, name: string) => readFileSync(join(root, dir, name), 'utf8');
    for (const name of ['config.json', 'tokenizer.json']) {
      expect(new Set(dirs.map((dir) => file(dir, name))).size, name).toBe(1);
    }
  });

  it("keeps kvpress's fractions and 1/16, 1/32 on at least 256 examples per cell", () => {
    expect(sweep.budgets).toEqual([0.75, 0.5, 0.25, 0.125, 1 / 16, 1 / 32]);
    expect(sweep.examplesPerCell).toBeGreaterThanOrEqual(256);
  });

  it('runs every registered policy but those awaiting the backbone and the study-only ones', () => {
    const names = new Set(sweep.policies.map((policy) => policy.name));
    const left = registry.names().filter((name) => !names.has(name));
    expect(left.sort()).toEqual([...AWAITING_BACKBONE, ...STUDY_ONLY].sort());
    for (const name of AWAITING_BACKBONE) expect(registry.provider(name).learned).toBeDefined();
  });

  it('runs the learned policies from directories trained on the model of each task they run on', async () => {
    await initBackend('wasm');
    type LearnedEntry = { name: string; dir: string; tasks: readonly string[] };
    const learned = (raw.policies as unknown[]).filter(
      (policy): policy is LearnedEntry => typeof (policy as { dir?: unknown }).dir === 'string',
    );
    expect(learned.map((policy) => policy.name)).toEqual(['gsa', 'namm', 'ngc']);
    for (const policy of learned.filter((entry) => entry.name !== 'ngc')) {
      const manifest = JSON.parse(readFileSync(join(root, policy.dir, 'policy.json'), 'utf8'));
      expect(policy.tasks).toBeDefined();
      for (const dir of new Set(policy.tasks.map((task) => checkpointOf(sweep, task)!))) {
        const { model } = await loadTaskModel(join(root, dir));
        try {
          expect(manifest.baseModel, dir).toBe(await modelIdentity(model));
        } finally {
          model.dispose();
        }
      }
    }
  });

  it("runs NGC from a run of its task's model: the weights the run wrote, trained from that model", async () => {
    await initBackend('wasm');
    const entry = (raw.policies as { name?: string; dir: string; tasks: string[] }[]).find(
      (policy) => policy.name === 'ngc',
    )!;
    const dir = join(root, entry.dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'policy.json'), 'utf8'));
    expect(manifest.model).toBe('.');
    const { model } = await readModelDirectory(dir, { tokenizer: 'optional' });
    try {
      expect(manifest.baseModel).toBe(await modelIdentity(model));
    } finally {
      model.dispose();
    }
    // the run's settings name the model it trained from, relative to examples/ngc-countdown
    const run = JSON.parse(readFileSync(join(dir, 'lethe-ngc.json'), 'utf8'));
    for (const task of entry.tasks) {
      expect(resolve(root, '../ngc-countdown', run.settings.model), task).toBe(
        resolve(root, checkpointOf(sweep, task)!),
      );
    }
  });
});

describe('npm start', () => {
  it('is the command these tests run: the leaderboard in one process', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(manifest.scripts.start).toBe(['exec node', ...START].join(' '));
  });

  let dir: string;
  let config: string;
  const results = () => join(dir, 'results.json');
  const run = (sweepFile: string) =>
    spawnSync(
      process.execPath,
      [...START, '--config', sweepFile, '--results', results(), '--out', join(dir, 'report')],
      { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
    );

  beforeAll(async () => {
    await initBackend('wasm');
    dir = mkdtempSync(join(tmpdir(), 'lethe-leaderboard-'));
    // An untrained model of the suite's tokenizer: the run, not the scores, is under test.
    const tokenizer = suiteBpeTokenizer();
    const size = { hidden: 16, layers: 1, heads: 2, kvHeads: 1, intermediate: 32 };
    const model = DecoderModel.random(taskModelConfig(size, tokenizer.vocabSize), 7);
    await writeModelDirectory(join(dir, 'model'), { model, tokenizer });
    model.dispose();
    // A second model for one member, as the sweep names one per line of training.
    const other = DecoderModel.random(taskModelConfig(size, tokenizer.vocabSize), 8);
    await writeModelDirectory(join(dir, 'model-two-hop'), { model: other, tokenizer });
    other.dispose();
    config = join(dir, 'sweep.json');
    const members = ['niah-multi', 'two-hop'];
    writeFileSync(
      config,
      JSON.stringify({
        ...raw,
        tasks: raw.tasks
          .filter((task: { label: string }) => members.includes(task.label))
          .map((task: { options: object }) => ({
            ...task,
            options: { ...task.options, contextChars: 256 },
          })),
        policies: [
          'full',
          'h2o',
          'snapkv',
          raw.policies.find((p: { name?: string }) => p.name === 'quest'),
        ],
        budgets: [0.5, 0.125],
        examplesPerCell: 4,
        batchSize: 4,
        checkpoints: { suite: join(dir, 'model'), 'two-hop': join(dir, 'model-two-hop') },
      }),
    );
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('evaluates the sweep and reports each member and their average per budget', () => {
    const first = run(config);
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.status).toBe(0);
    const written = JSON.parse(readFileSync(results(), 'utf8'));
    // per member: the full cache, then 3 policies × 2 budgets
    expect(written.cells).toHaveLength(2 * (1 + 3 * 2));
    for (const cell of written.cells) {
      expect(cell.sequences).toHaveLength(4);
      expect(cell.metrics.peakKvBytes.mean).toBeGreaterThan(0);
    }
    const markdown = readFileSync(join(dir, 'report', 'report.md'), 'utf8');
    expect(markdown).toContain('## average of 2 tasks');
    expect(markdown).toContain('averages the accuracy of niah-multi, two-hop');
    expect(markdown).toContain('Against the best heuristic');
    const html = readFileSync(join(dir, 'report', 'report.html'), 'utf8');
    for (const member of ['niah-multi', 'two-hop']) {
      expect(html).toContain(`id="plot-${member}-accuracy-budget"`);
      expect(html).toContain(`id="plot-${member}-accuracy-peak"`);
    }
    expect(html).toContain('Accuracy vs peak KV memory: niah-multi');

    // A second run resumes: every cell is in the file, none is recomputed.
    const again = run(config);
    expect(again.status).toBe(0);
    expect(JSON.parse(readFileSync(results(), 'utf8'))).toEqual(written);
  });

  it.skipIf(skipWithoutRedis('[leaderboard] --redis test'))(
    'with --redis, a lethe worker process computes the cells: the same results',
    async () => {
      const redis = await startTestRedis();
      const worker = spawn(process.execPath, [LETHE, 'worker', '--redis', redis.url], {
        cwd: root,
        stdio: 'ignore',
      });
      try {
        const queued = join(dir, 'queued.json');
        const args = [...START, '--config', config, '--results', queued, '--out'];
        const done = spawnSync(
          process.execPath,
          [...args, join(dir, 'queued-report'), '--redis', redis.url],
          { cwd: root, encoding: 'utf8' },
        );
        expect(done.status).toBe(0);
        expect(timelessCells(queued)).toEqual(timelessCells(results()));
        const both = spawnSync(
          process.execPath,
          [...args, join(dir, 'both-report'), '--redis', redis.url, '--threads', '2'],
          { cwd: root, encoding: 'utf8' },
        );
        expect(both.status).toBe(2);
        expect(both.stderr).toContain('[E_ARG] --threads: cannot be given with --redis');
      } finally {
        worker.kill('SIGKILL');
        await redis.stop();
      }
    },
    300_000,
  );

  it('passes a kill on to the evaluation it runs: nothing writes the results file after it', async () => {
    const longer = join(dir, 'longer.json');
    const longerResults = join(dir, 'longer-results.json');
    const sweepJson = JSON.parse(readFileSync(config, 'utf8'));
    writeFileSync(
      longer,
      JSON.stringify({ ...sweepJson, budgets: [0.5, 0.25, 0.125], examplesPerCell: 32 }),
    );
    const total = 2 * (1 + 3 * 3);
    const child = spawn(
      process.execPath,
      [
        ...START,
        '--config',
        longer,
        '--results',
        longerResults,
        '--out',
        join(dir, 'longer-report'),
      ],
      { cwd: root, stdio: 'ignore' },
    );
    const exited = once(child, 'exit');
    const cellsWritten = () =>
      existsSync(longerResults) ? JSON.parse(readFileSync(longerResults, 'utf8')).cells.length : 0;
    while (cellsWritten() === 0) await sleep(50);
    child.kill('SIGINT');
    await exited;
    // The leaderboard has exited: so has the `lethe eval` it started.
    expect(processesNaming(longerResults)).toEqual([]);
    const cells = cellsWritten();
    expect(cells).toBeGreaterThanOrEqual(1);
    expect(cells).toBeLessThan(total);
  });

  it('stops with one coded line when the model is missing', () => {
    const missing = join(dir, 'missing.json');
    const sweepJson = JSON.parse(readFileSync(config, 'utf8'));
    writeFileSync(
      missing,
      JSON.stringify({ ...sweepJson, checkpoints: { suite: join(dir, 'no-model') } }),
    );
    rmSync(results(), { force: true });
    const failed = run(missing);
    expect(failed.status).toBe(2);
    const errors = failed.stderr.split('\n').filter((line) => line.startsWith('lethe: '));
    expect(errors).toEqual([
      expect.stringMatching(/^lethe: \[E_CHECKPOINT\] .*no-model: cannot be read/),
    ]);
    expect(failed.stdout).toBe('');
    // and leaves no results file behind to refuse the next run's config
    expect(existsSync(results())).toBe(false);
  });
});
