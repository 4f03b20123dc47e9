import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LetheError } from '@lethe/core';
import { DecoderModel, defaultConfig } from '@lethe/model';
import { saveCheckpoint } from '@lethe/model/node';
import { initBackend, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  emptyResults,
  type ModelProvider,
  type SweepProgress,
  sweepCells,
  validateSweepConfig,
} from '../../src/harness/index';
import {
  lockResultsFile,
  RESULTS_LOCK_STALE_MS,
  type RunSweepOptions,
  runSweep,
  writeResultsFile,
} from '../../src/harness/node';
import { renderMarkdown } from '../../src/report/index';
import { createTask as createRegisteredTask } from '../../src/tasks/index';
import type { Task } from '../../src/tasks/task';
import { steppingClock, tinyModel, toyLmTask, toyTask } from './toy';

let dir: string;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-sweep-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const config = {
  tasks: [{ name: 'toy', options: { maxNewTokens: 12 } }, 'toy-lm'],
  policies: ['full', 'streaming-llm', 'tova'],
  budgets: [0.5, 0.25],
  seeds: [0, 1],
  examplesPerCell: 2,
  samplesPerExample: 2,
  batchSize: 3,
};

function createTask(name: string, options: Readonly<Record<string, unknown>>): Task {
  if (name === 'toy') return toyTask(options);
  if (name === 'toy-lm') return toyLmTask();
  throw new Error(`no task ${name}`);
}

/** Saves a random one-layer model (`kvHeads` KV heads, seed `seed`) as checkpoint `name`. */
async function randomCheckpoint(
  name: string,
  vocab: number,
  kvHeads: number,
  seed: number,
): Promise<string> {
  const model = DecoderModel.random(
    defaultConfig({
      model_type: 'llama',
      vocab_size: vocab,
      hidden_size: 16,
      intermediate_size: 32,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: kvHeads,
    }),
    seed,
  );
  const checkpoint = join(dir, 'checkpoints', name);
  await saveCheckpoint(checkpoint, { config: model.config, tensors: model.toTensors() });
  model.dispose();
  return checkpoint;
}

/** A provider of identical tiny models that counts loads and checks releases. */
function provider(): ModelProvider & { loads: string[]; live: number } {
  const state = {
    loads: [] as string[],
    live: 0,
    load(task: string): DecoderModel {
      state.loads.push(task);
      state.live += 1;
      return tinyModel(1);
    },
    release(_task: string, model: DecoderModel): void {
      state.live -= 1;
      model.dispose();
    },
  };
  return state;
}

function options(extra: Partial<RunSweepOptions> = {}): RunSweepOptions {
  return {
    createTask,
    taskNames: ['toy', 'toy-lm'],
    models: provider(),
    now: steppingClock(3),
    ...extra,
  };
}

async function rejection(run: Promise<unknown>): Promise<LetheError> {
  return (await run.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  )) as LetheError;
}

describe('runSweep', () => {
  it('resumes an interrupted sweep to a byte-identical results file', async () => {
    const total = sweepCells(validateSweepConfig(config)).length;
    expect(total).toBe(2 * 2 * 5);
    const tensorsBefore = tf.memory().numTensors;

    const straightPath = join(dir, 'straight', 'results.json');
    const straightModels = provider();
    const progress: SweepProgress[] = [];
    const straight = await runSweep(config, {
      ...options({ models: straightModels }),
      resultsPath: straightPath,
      onProgress: (p) => progress.push(p),
    });
    expect(straight.cells).toHaveLength(total);
    expect(straightModels.loads).toEqual(['toy', 'toy-lm']);
    expect(straightModels.live).toBe(0);
    expect(progress.map((p) => p.index)).toEqual([...Array(total).keys()]);
    expect(progress.every((p) => p.total === total && !p.skipped)).toBe(true);
    expect(progress[0]!.etaMs).toBeGreaterThan(0);
    expect(progress.at(-1)!.etaMs).toBe(0);
    const straightText = await readFile(straightPath, 'utf8');
    expect(JSON.parse(straightText)).toEqual(straight);

    const resumedPath = join(dir, 'resumed', 'results.json');
    const controller = new AbortController();
    const interrupted = await rejection(
      runSweep(config, {
        ...options(),
        resultsPath: resumedPath,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.index === 1) controller.abort();
        },
      }),
    );
    expect((interrupted as Error).name).toBe('AbortError');
    const partial = JSON.parse(await readFile(resumedPath, 'utf8'));
    expect(partial.cells).toHaveLength(2);

    const resumedModels = provider();
    const skipped: boolean[] = [];
    await runSweep(config, {
      ...options({ models: resumedModels }),
      resultsPath: resumedPath,
      onProgress: (p) => skipped.push(p.skipped),
    });
    expect(skipped.filter(Boolean)).toHaveLength(2);
    expect(skipped.slice(0, 2)).toEqual([true, true]);
    expect(await readFile(resumedPath, 'utf8')).toBe(straightText);

    // A finished sweep recomputes nothing and leaves the file as it is.
    const idle = provider();
    const again = await runSweep(config, {
      ...options({ models: idle }),
      resultsPath: straightPath,
    });
    expect(idle.loads).toEqual([]);
    expect(again).toEqual(straight);
    expect(await readFile(straightPath, 'utf8')).toBe(straightText);
    expect(tf.memory().numTensors).toBe(tensorsBefore);

    // Without a results file the same cells come back in memory.
    const inMemory = await runSweep(config, options());
    expect(inMemory).toEqual(straight);

    for (const cell of straight.cells) {
      expect(cell.command.startsWith(`lethe eval --task ${cell.key.task} `)).toBe(true);
      const m = cell.metrics;
      if (cell.key.task === 'toy') {
        expect(m.accuracy!.mean).toBeGreaterThanOrEqual(0);
        expect(m.accuracy!.mean).toBeLessThanOrEqual(1);
      } else {
        expect(m.perplexity!.mean).toBeGreaterThan(1);
      }
      if (cell.key.policy === 'full') expect(m.peakKvReduction!.mean).toBe(1);
      else expect(m.peakKvReduction!.mean).toBeGreaterThan(1);
    }
  });

  it('runs one label with other options per task when their tasks are disjoint', async () => {
    const spec = (sinks: number, task: string) => ({
      name: 'streaming-llm',
      label: 'sl',
      options: { sinks },
      tasks: [task],
    });
    const base = { ...config, seeds: [0], budgets: [0.5] };
    const shared = await runSweep(
      { ...base, policies: [spec(1, 'toy'), spec(3, 'toy-lm')] },
      options(),
    );
    const alone = await runSweep(
      { ...base, policies: [spec(1, 'toy'), { ...spec(3, 'toy-lm'), label: 'other' }] },
      options(),
    );
    const ofTask = (results: typeof shared, task: string) =>
      results.cells.find((cell) => cell.key.task === task)!;
    for (const [task, sinks] of [
      ['toy', 1],
      ['toy-lm', 3],
    ] as const) {
      const cell = ofTask(shared, task);
      expect(cell.key.policy).toBe('sl');
      expect(cell.command).toContain(`{"sinks":${sinks}}`);
      expect(cell.metrics).toEqual({
        ...ofTask(alone, task).metrics,
        tokensPerSecond: cell.metrics.tokensPerSecond,
      });
    }
  });

  it('runs a task under its own budget rule, as a sweep with that rule runs it', async () => {
    const rule = { ...config, seeds: [0], budgets: [0.5], policies: ['full', 'h2o', 'tova'] };
    const toy = { name: 'toy', options: { maxNewTokens: 12 } };
    const both = await runSweep(
      {
        ...rule,
        tasks: [
          { ...toy, label: 'ceiling' },
          { ...toy, label: 'rate', rateEvery: 3 },
          { name: 'toy-lm', rateEvery: 3 },
        ],
      },
      options(),
    );
    const rated = await runSweep({ ...rule, rateEvery: 3 }, options());
    const ceiling = await runSweep(rule, options());
    const metrics = (cell: (typeof both.cells)[number]) => ({
      ...cell.metrics,
      tokensPerSecond: undefined,
    });
    const of = (results: typeof both, task: string, policy: string) =>
      results.cells.find((c) => c.key.task === task && c.key.policy === policy)!;
    for (const policy of ['h2o', 'tova']) {
      expect(metrics(of(both, 'rate', policy))).toEqual(metrics(of(rated, 'toy', policy)));
      expect(metrics(of(both, 'toy-lm', policy))).toEqual(metrics(of(rated, 'toy-lm', policy)));
      expect(metrics(of(both, 'ceiling', policy))).toEqual(metrics(of(ceiling, 'toy', policy)));
      expect(of(both, 'rate', policy).command).toContain('--rate-every 3');
    }
    expect(metrics(of(both, 'rate', 'h2o'))).not.toEqual(metrics(of(both, 'ceiling', 'h2o')));
    const summary = renderMarkdown(both).split('\n## ')[0]!;
    expect(summary).toContain('Task rate has its own rule, a rate schedule: every 3 tokens');
    expect(summary).toContain('Task toy-lm has its own rule');
    expect(summary).not.toContain('Task ceiling');
  });

  it('refuses a results file of another format, version or config', async () => {
    const path = join(dir, 'refuse', 'results.json');
    await runSweep(
      { ...config, tasks: ['toy-lm'], seeds: [0] },
      { ...options(), resultsPath: path },
    );
    const good = JSON.parse(await readFile(path, 'utf8'));

    const other = await rejection(
      runSweep(
        { ...config, tasks: ['toy-lm'], seeds: [0], budgets: [0.5] },
        { ...options(), resultsPath: path },
      ),
    );
    expect([other.code, other.argument]).toEqual(['E_ARG', path]);
    expect(other.message).toContain('budgets');

    for (const [bad, code] of [
      [{ ...good, version: 1 }, 'E_FORMAT'],
      [{ ...good, format: 'something-else' }, 'E_FORMAT'],
      [{ ...good, config: { ...good.config, seeds: 'zero' } }, 'E_FORMAT'],
      [
        { ...good, cells: [{ ...good.cells[0], key: { ...good.cells[0].key, seed: 9 } }] },
        'E_FORMAT',
      ],
      [{ ...good, cells: [good.cells[0], good.cells[0]] }, 'E_FORMAT'],
      // A cell the report could not read is refused at load, not after the sweep has run.
      [{ ...good, cells: [{ ...good.cells[0], metrics: {} }] }, 'E_FORMAT'],
    ] as const) {
      const badPath = join(dir, 'refuse', `bad-${code}-${Math.random()}.json`);
      await writeFile(badPath, JSON.stringify(bad));
      const error = await rejection(
        runSweep(
          { ...config, tasks: ['toy-lm'], seeds: [0] },
          { ...options(), resultsPath: badPath },
        ),
      );
      expect([error.code, error.argument]).toEqual([code, badPath]);
    }
    const notJson = join(dir, 'refuse', 'not.json');
    await writeFile(notJson, '{"format": ');
    const error = await rejection(runSweep(config, { ...options(), resultsPath: notJson }));
    expect([error.code, error.argument]).toEqual(['E_FORMAT', notJson]);
    // The refused file is untouched.
    expect(await readFile(notJson, 'utf8')).toBe('{"format": ');
  });

  it('keeps the finished cells of a config that grows (policies, budgets, seeds), and refuses one that changes or drops a finished cell', async () => {
    const path = join(dir, 'grow', 'results.json');
    const small = {
      ...config,
      tasks: ['toy-lm'],
      policies: ['full', 'streaming-llm'],
      budgets: [0.5],
      seeds: [0],
    };
    expect((await runSweep(small, { ...options(), resultsPath: path })).cells).toHaveLength(2);
    const grown = { ...small, policies: ['full', 'streaming-llm', 'tova'], budgets: [0.5, 0.25] };
    const progress: SweepProgress[] = [];
    const kept = await runSweep(grown, {
      ...options(),
      resultsPath: path,
      onProgress: (p) => progress.push(p),
    });
    expect(progress.filter((p) => p.skipped).map((p) => [p.key.policy, p.key.budget])).toEqual([
      ['full', 1],
      ['streaming-llm', 0.5],
    ]);
    expect(progress.filter((p) => !p.skipped)).toHaveLength(3);
    // What the grown sweep holds is what a straight run of it computes.
    const straight = await runSweep(grown, {
      ...options(),
      resultsPath: join(dir, 'grow', 'straight.json'),
    });
    const comparable = (results: typeof kept) =>
      results.cells.map((cell) => ({
        key: cell.key,
        metrics: { ...cell.metrics, tokensPerSecond: undefined },
        sequences: cell.sequences,
        command: cell.command,
      }));
    expect(comparable(kept)).toEqual(comparable(straight));
    expect(JSON.parse(await readFile(path, 'utf8')).config).toEqual(
      JSON.parse(await readFile(join(dir, 'grow', 'straight.json'), 'utf8')).config,
    );

    const text = await readFile(path, 'utf8');
    const changed = await rejection(
      runSweep({ ...grown, examplesPerCell: 3 }, { ...options(), resultsPath: path }),
    );
    expect([changed.code, changed.argument]).toEqual(['E_ARG', path]);
    expect(changed.message).toContain(
      'gives the cell (task "toy-lm", policy "full", budget 1, seed 0) other settings (field "examplesPerCell" differs)',
    );
    const dropped = await rejection(
      runSweep({ ...grown, policies: ['full', 'tova'] }, { ...options(), resultsPath: path }),
    );
    expect([dropped.code, dropped.argument]).toEqual(['E_ARG', path]);
    expect(dropped.message).toContain(
      'holds the cell (task "toy-lm", policy "streaming-llm", budget 0.5, seed 0), which this configuration',
    );
    expect(await readFile(path, 'utf8')).toBe(text);
  });

  it('refuses a results path it cannot read or write with a coded error naming it', async () => {
    const small = { ...config, tasks: ['toy-lm'], seeds: [0] };
    const folder = join(dir, 'unusable');
    await mkdir(folder, { recursive: true });
    const models = provider();
    const directory = await rejection(
      runSweep(small, { ...options({ models }), resultsPath: folder }),
    );
    expect([directory.code, directory.argument]).toEqual(['E_ARG', folder]);
    expect(directory.message).toContain('is a directory, expected a file (EISDIR)');
    const file = join(folder, 'plain.txt');
    await writeFile(file, 'not a directory');
    const underFile = join(file, 'results.json');
    const read = await rejection(
      runSweep(small, { ...options({ models }), resultsPath: underFile }),
    );
    expect([read.code, read.argument]).toEqual(['E_ARG', underFile]);
    expect(models.loads).toEqual([]);
    const written = await rejection(
      writeResultsFile(underFile, emptyResults(validateSweepConfig(small))),
    );
    expect([written.code, written.argument]).toEqual(['E_ARG', underFile]);
    expect(written.message).toMatch(/cannot be written: .*(ENOTDIR|EEXIST)/);
  });

  it('leaves no results file when it fails before a cell finishes, so another config may start there', async () => {
    const small = { ...config, tasks: ['toy-lm'], seeds: [0], policies: ['full', 'h2o'] };
    const path = join(dir, 'unread-model', 'results.json');
    const unreadable: ModelProvider = {
      load: () => {
        throw new LetheError('E_CHECKPOINT', 'cannot be read', 'no-model');
      },
    };
    const error = await rejection(
      runSweep(small, { ...options({ models: unreadable }), resultsPath: path }),
    );
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', 'no-model']);
    expect(existsSync(path)).toBe(false);
    const other = { ...small, budgets: [0.25] };
    const results = await runSweep(other, { ...options(), resultsPath: path });
    expect(JSON.parse(await readFile(path, 'utf8')).cells).toHaveLength(results.cells.length);
  });

  it('locks its results file while it runs: a second run is refused, a killed run’s lock expires', async () => {
    const small = { ...config, tasks: ['toy-lm'], seeds: [0], policies: ['full', 'streaming-llm'] };
    const path = join(dir, 'locked', 'results.json');
    const held = await lockResultsFile(path);
    const refused = await rejection(runSweep(small, { ...options(), resultsPath: path }));
    expect([refused.code, refused.argument]).toEqual(['E_STATE', path]);
    expect(refused.message).toContain('another run');
    expect(existsSync(path)).toBe(false);
    await held.release();

    const locked: boolean[] = [];
    await runSweep(small, {
      ...options(),
      resultsPath: path,
      onProgress: () => locked.push(existsSync(`${path}.lock`)),
    });
    expect(locked).toEqual(
      sweepCells(validateSweepConfig(small, { tasks: ['toy-lm'] })).map(() => true),
    );
    expect(existsSync(`${path}.lock`)).toBe(false);

    // A lock its holder stopped refreshing (a killed run) longer ago than the stale time.
    const stale = join(dir, 'locked', 'stale.json');
    await mkdir(`${stale}.lock`);
    const past = new Date(Date.now() - RESULTS_LOCK_STALE_MS - 5_000);
    await utimes(`${stale}.lock`, past, past);
    const results = await runSweep(small, { ...options(), resultsPath: stale });
    expect(JSON.parse(await readFile(stale, 'utf8')).cells).toHaveLength(results.cells.length);
    expect(existsSync(`${stale}.lock`)).toBe(false);
  });

  it('takes over at once a lock whose holder was a process of this machine that is gone', async () => {
    const small = { ...config, tasks: ['toy-lm'], seeds: [0], policies: ['full'] };
    const exited = spawnSync(process.execPath, ['-e', '']);
    const gone = exited.pid!;
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      const holders: [string, { host: string; pid: number }, boolean][] = [
        ['gone', { host: hostname(), pid: gone }, true],
        ['alive', { host: hostname(), pid: sleeper.pid! }, false],
        ['elsewhere', { host: `not-${hostname()}`, pid: gone }, false],
      ];
      for (const [name, owner, taken] of holders) {
        const path = join(dir, 'owned', `${name}.json`);
        await mkdir(`${path}.lock`, { recursive: true });
        await writeFile(`${path}.lock-owner`, JSON.stringify(owner));
        const run = runSweep(small, { ...options(), resultsPath: path });
        if (taken) {
          await run;
          expect(existsSync(`${path}.lock`), name).toBe(false);
          expect(existsSync(`${path}.lock-owner`), name).toBe(false);
        } else {
          const refused = await rejection(run);
          expect([refused.code, refused.argument], name).toEqual(['E_STATE', path]);
        }
      }
    } finally {
      sleeper.kill();
    }
    // While a run holds its lock, the owner file names it.
    const path = join(dir, 'owned', 'held.json');
    const held = await lockResultsFile(path);
    expect(JSON.parse(await readFile(`${path}.lock-owner`, 'utf8'))).toEqual({
      host: hostname(),
      pid: process.pid,
    });
    await held.release();
    expect(existsSync(`${path}.lock-owner`)).toBe(false);
  });

  it('tells a run whose lock was taken from it, naming the file', async () => {
    const path = join(dir, 'lost', 'results.json');
    const held = await lockResultsFile(path);
    await rm(`${path}.lock`, { recursive: true });
    await new Promise((resolve) => held.lost.addEventListener('abort', resolve, { once: true }));
    const reason = held.lost.reason as LetheError;
    expect([reason.code, reason.argument]).toEqual(['E_STATE', path]);
    await held.release();
  }, 30_000);

  it('validates the config and names before running anything', async () => {
    const models = provider();
    const policy = await rejection(runSweep({ ...config, policies: ['h2x'] }, options({ models })));
    expect([policy.code, policy.argument]).toEqual(['E_ARG', 'policies[0]']);
    expect(policy.message).toContain('streaming-llm');
    const budget = await rejection(runSweep({ ...config, budgets: [0.5, 2] }, options({ models })));
    expect([budget.code, budget.argument]).toEqual(['E_BUDGET', 'budgets[1]']);
    const task = await rejection(runSweep({ ...config, tasks: ['nope'] }, options({ models })));
    expect([task.code, task.argument]).toEqual(['E_ARG', 'tasks[0].name']);
    expect(models.loads).toEqual([]);
    const checkpoint = await rejection(
      runSweep({ ...config, tasks: ['toy-lm'] }, { createTask, taskNames: ['toy-lm'] }),
    );
    expect([checkpoint.code, checkpoint.argument]).toEqual(['E_ARG', 'checkpoints.toy-lm']);
  });

  it('keeps only finished cells when aborted inside a cell', async () => {
    const small = { ...config, tasks: ['toy-lm'], seeds: [0], policies: ['full', 'streaming-llm'] };
    const straightPath = join(dir, 'mid', 'straight.json');
    await runSweep(small, { ...options(), resultsPath: straightPath });
    const path = join(dir, 'mid', 'results.json');
    const controller = new AbortController();
    const clock = steppingClock(3);
    let armed = false;
    let readings = 0;
    const error = await rejection(
      runSweep(small, {
        ...options(),
        resultsPath: path,
        signal: controller.signal,
        now: () => {
          // The second reading after cell 0 is reported is the start of cell 1's first batch.
          if (armed && ++readings === 2) controller.abort();
          return clock();
        },
        onProgress: (p) => {
          expect(p.index).toBe(0);
          armed = true;
        },
      }),
    );
    expect((error as Error).name).toBe('AbortError');
    expect(JSON.parse(await readFile(path, 'utf8')).cells).toHaveLength(1);
    await runSweep(small, { ...options(), resultsPath: path });
    expect(await readFile(path, 'utf8')).toBe(await readFile(straightPath, 'utf8'));
  });

  it('runs the registered tasks with models from checkpoint directories', async () => {
    const tasks = [
      { name: 'arithmetic', options: { steps: 2 } },
      { name: 'lm', options: { documentChars: 48 } },
    ];
    const checkpoints: Record<string, string> = {};
    for (const { name, options: taskOptions } of tasks) {
      const vocab = createRegisteredTask(name, taskOptions).tokenizer.vocabSize;
      checkpoints[name] = await randomCheckpoint(name, vocab, 2, 3);
    }
    const before = tf.memory().numTensors;
    const results = await runSweep(
      {
        tasks,
        policies: ['full', 'h2o', 'snapkv'],
        budgets: [0.5],
        seeds: [4],
        examplesPerCell: 2,
        checkpoints,
      },
      { now: steppingClock() },
    );
    expect(tf.memory().numTensors).toBe(before);
    expect(results.cells.map((c) => `${c.key.task}/${c.key.policy}`)).toEqual([
      'arithmetic/full',
      'arithmetic/h2o',
      'arithmetic/snapkv',
      'lm/full',
      'lm/h2o',
      'lm/snapkv',
    ]);
    const [arithmetic, , , lm, lmH2o] = results.cells;
    expect(arithmetic!.metrics.accuracy!.n).toBe(2);
    expect(lm!.metrics.perplexity!.mean).toBeGreaterThan(1);
    expect(lmH2o!.metrics.peakKvReduction!.mean).toBeGreaterThan(1.4);
    expect(arithmetic!.command).toContain(`--checkpoint ${checkpoints.arithmetic}`);
    expect(arithmetic!.command).toContain(`--task-options '{"steps":2}'`);
  });

  it('runs one registry task under several labels from one checkpoint of its name', async () => {
    const vocab = createRegisteredTask('suite').tokenizer.vocabSize;
    const checkpoint = await randomCheckpoint('suite', vocab, 1, 5);
    const member = (name: string) => ({
      name: 'suite',
      label: name,
      options: { member: name, contextChars: 256 },
    });
    const config = {
      tasks: [member('niah-multi'), member('two-hop')],
      policies: ['full', 'h2o'],
      budgets: [0.5],
      seeds: [2],
      examplesPerCell: 2,
      checkpoints: { suite: checkpoint },
    };
    const before = tf.memory().numTensors;
    const results = await runSweep(config, { now: steppingClock() });
    expect(tf.memory().numTensors).toBe(before);
    expect(results.cells.map((c) => `${c.key.task}/${c.key.policy}`)).toEqual([
      'niah-multi/full',
      'niah-multi/h2o',
      'two-hop/full',
      'two-hop/h2o',
    ]);
    const [niah, , twoHop] = results.cells;
    expect(niah!.command).toContain('--task-label niah-multi');
    expect(twoHop!.command).toContain(`--checkpoint ${checkpoint}`);
    const suite = createRegisteredTask('suite', { member: 'two-hop', contextChars: 256 });
    const promptTokens = suite.tokenizer.encode(suite.example(2, 0).prompt).length;
    const first = twoHop!.sequences![0]!;
    expect(first.peakTotal).toBeGreaterThanOrEqual(promptTokens);
    expect(first.peakTotal).toBeLessThanOrEqual(promptTokens + first.generated);
  });
});
