import { cp, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTask } from '@lethe/eval';
import { checkpointModels } from '@lethe/eval/node';
import { readModelDirectory } from '@lethe/model/node';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTaskModel } from '../src/load-task-model';
import { TASK_MODEL_FILE } from '../src/manifest';
import { resolvePretrainSettings } from '../src/pretrain-settings';
import { pretrainTaskModel } from '../src/pretrain-task-model';
import { formatTaskOptionFlag, parseTaskOptionFlag } from '../src/task-option-flag';
import { MICRO } from './helpers';

let dir: string;
let model: string;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-load-'));
  model = join(dir, 'model');
  const run = await pretrainTaskModel({
    task: 'arithmetic',
    taskOptions: { steps: 2 },
    modelSize: MICRO,
    steps: 2,
    batchSize: 2,
    evalExamples: 0,
    out: model,
  });
  run.model.dispose();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the model directory, damaged by `damage`. */
async function damaged(name: string, damage: (copy: string) => Promise<void>): Promise<string> {
  const copy = join(dir, name);
  await cp(model, copy, { recursive: true });
  await damage(copy);
  return copy;
}

describe('loadTaskModel errors name the file and say why', () => {
  it('a missing directory', async () => {
    const error = await expectLetheRejection(loadTaskModel(join(dir, 'nowhere')));
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', join(dir, 'nowhere')]);
    expect(error.message).toMatch(/no such file or directory/);
  });

  it('a directory without lethe-model.json', async () => {
    const copy = await damaged('no-manifest', (d) => rm(join(d, TASK_MODEL_FILE)));
    const error = await expectLetheRejection(loadTaskModel(copy));
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', join(copy, TASK_MODEL_FILE)]);
    expect(error.message).toMatch(/is missing: .* is not a task-model directory/);
  });

  it('a manifest that is not JSON, or of another version', async () => {
    const notJson = await damaged('bad-json', (d) => writeFile(join(d, TASK_MODEL_FILE), '{ nope'));
    const error = await expectLetheRejection(loadTaskModel(notJson));
    expect([error.code, error.argument]).toEqual(['E_FORMAT', join(notJson, TASK_MODEL_FILE)]);
    expect(error.message).toMatch(/is not JSON/);

    const version = await damaged('version', async (d) => {
      const json = JSON.parse(await readFile(join(d, TASK_MODEL_FILE), 'utf8'));
      await writeFile(join(d, TASK_MODEL_FILE), JSON.stringify({ ...json, version: 2 }));
    });
    const wrong = await expectLetheRejection(loadTaskModel(version));
    expect([wrong.code, wrong.argument]).toEqual(['E_FORMAT', join(version, TASK_MODEL_FILE)]);
    expect(wrong.message).toMatch(/field "version" is 2; this package reads version 1/);

    const field = await damaged('field', async (d) => {
      const json = JSON.parse(await readFile(join(d, TASK_MODEL_FILE), 'utf8'));
      await writeFile(
        join(d, TASK_MODEL_FILE),
        JSON.stringify({ ...json, training: { ...json.training, steps: 0 } }),
      );
    });
    expect((await expectLetheRejection(loadTaskModel(field))).message).toMatch(
      /field "training.steps"/,
    );
  });

  it('truncated weights, a missing tokenizer, a bad config', async () => {
    const truncated = await damaged('truncated', (d) =>
      truncate(join(d, 'model.safetensors'), 500),
    );
    const weights = await expectLetheRejection(loadTaskModel(truncated));
    expect([weights.code, weights.argument]).toEqual([
      'E_FORMAT',
      join(truncated, 'model.safetensors'),
    ]);
    expect(weights.message).toMatch(/truncated/);

    const noTokenizer = await damaged('no-tokenizer', (d) => rm(join(d, 'tokenizer.json')));
    const tokenizer = await expectLetheRejection(loadTaskModel(noTokenizer));
    expect([tokenizer.code, tokenizer.argument]).toEqual([
      'E_CHECKPOINT',
      join(noTokenizer, 'tokenizer.json'),
    ]);
    expect(tokenizer.message).toMatch(/tokenizer\.json: is missing$/);

    const config = await damaged('config', async (d) => {
      const json = JSON.parse(await readFile(join(d, 'config.json'), 'utf8'));
      await writeFile(join(d, 'config.json'), JSON.stringify({ ...json, hidden_size: -1 }));
    });
    const bad = await expectLetheRejection(loadTaskModel(config));
    expect(bad.argument).toBe(join(config, 'config.json'));
    expect(bad.message).toMatch(/hidden_size/);
  });

  it('a per-member score that solves more than it has', async () => {
    const bad = await damaged('bad-members', async (d) => {
      const json = JSON.parse(await readFile(join(d, TASK_MODEL_FILE), 'utf8'));
      const members = { 'two-hop': { correct: 3, total: 2 } };
      await writeFile(
        join(d, TASK_MODEL_FILE),
        JSON.stringify({
          ...json,
          evaluation: {
            policy: 'full',
            ...{ seed: 0, examples: 2, batchSize: 2, metric: 'accuracy' },
            ...{ mean: 0.5, stderr: 0.5, n: 2, command: 'lethe eval …', members },
          },
        }),
      );
    });
    const error = await expectLetheRejection(loadTaskModel(bad));
    expect([error.code, error.argument]).toEqual(['E_FORMAT', join(bad, TASK_MODEL_FILE)]);
    expect(error.message).toMatch(/evaluation\.members\.two-hop\.correct" must be ≤ total/);
  });

  it('a tokenizer of another task', async () => {
    const other = await damaged('other-task', async (d) => {
      const json = JSON.parse(await readFile(join(d, TASK_MODEL_FILE), 'utf8'));
      await writeFile(
        join(d, TASK_MODEL_FILE),
        JSON.stringify({ ...json, task: { name: 'countdown', options: {}, resolved: {} } }),
      );
    });
    const error = await expectLetheRejection(loadTaskModel(other));
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', join(other, 'tokenizer.json')]);
    expect(error.message).toMatch(/not the countdown task's/);
  });
});

describe('the harness model provider', () => {
  it('loads task-model directories and refuses a model of another task', async () => {
    const loaded = await checkpointModels({ arithmetic: model }).load('arithmetic');
    expect(loaded.config.hidden_size).toBe(MICRO.hidden);
    loaded.dispose();
    const error = await expectLetheRejection(
      Promise.resolve(checkpointModels({ countdown: model }).load('countdown')),
    );
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', join(model, 'tokenizer.json')]);
  });

  it('checks a labelled task against the tokenizer of the task under that label', async () => {
    const arithmetic = new Map([['steps-2', createTask('arithmetic', { steps: 2 })]]);
    const loaded = await checkpointModels({ 'steps-2': model }, arithmetic).load('steps-2');
    loaded.dispose();
    const countdown = new Map([['steps-2', createTask('countdown')]]);
    const error = await expectLetheRejection(
      Promise.resolve(checkpointModels({ 'steps-2': model }, countdown).load('steps-2')),
    );
    expect([error.code, error.argument]).toEqual(['E_CHECKPOINT', join(model, 'tokenizer.json')]);
    expect(error.message).toMatch(/not the countdown task's/);
    expectLetheError(() => checkpointModels({}, {} as never), 'E_ARG', 'tasks');
  });

  it('still loads a directory without a tokenizer (config.json + model.safetensors)', async () => {
    const bare = await damaged('bare', (d) => rm(join(d, 'tokenizer.json')));
    const loaded = await readModelDirectory(bare, { tokenizer: 'optional' });
    expect(loaded.tokenizer).toBeUndefined();
    loaded.model.dispose();
    const viaProvider = await checkpointModels({ arithmetic: bare }).load('arithmetic');
    viaProvider.dispose();
  });
});

describe('pretraining settings', () => {
  it('name the setting that is wrong', () => {
    const unknown = expectLetheError(() => resolvePretrainSettings({ task: 'nope', out: 'x' }));
    expect(unknown.argument).toBe('task');
    expect(unknown.message).toMatch(/valid names: countdown, retrieval, arithmetic, lm/);
    const option = expectLetheError(() =>
      resolvePretrainSettings({ task: 'countdown', taskOptions: { count: 5 }, out: 'x' }),
    );
    expect(option.argument).toBe('taskOptions.count');
    for (const [options, argument] of [
      [{ steps: 0 }, 'steps'],
      [{ steps: 10, warmupSteps: 10 }, 'warmupSteps'],
      [{ modelSize: { hidden: 30, heads: 4 } }, 'modelSize.heads'],
      [{ modelSize: { heads: 4, kvHeads: 3 } }, 'modelSize.kvHeads'],
      [{ window: 8 }, 'window'],
      [{ evalSeed: 1_000_000 }, 'evalSeed'],
      [{ lr: 0 }, 'lr'],
      [{ out: '' }, 'out'],
    ] as const) {
      const error = expectLetheError(() =>
        resolvePretrainSettings({ task: 'arithmetic', out: 'x', ...options }),
      );
      expect([error.code, error.argument]).toEqual(['E_ARG', argument]);
    }
  });

  it('give the lm task a window of at most 512 tokens', () => {
    const { settings } = resolvePretrainSettings({
      task: 'lm',
      taskOptions: { documentChars: 100 },
      out: 'x',
    });
    expect(settings.window).toBe(101);
    expect(resolvePretrainSettings({ task: 'lm', out: 'x' }).settings.window).toBe(512);
  });
});

describe('--task-option values', () => {
  it('round-trip through key=value text', () => {
    for (const value of ['mixed', 'niah-multi', 3, 0.25, true, '3', 'true', '"q"']) {
      const text = formatTaskOptionFlag('k', value);
      expect(parseTaskOptionFlag(text)).toEqual(['k', value]);
    }
    expect(formatTaskOptionFlag('count', 'mixed')).toBe('count=mixed');
    expect(formatTaskOptionFlag('count', '3')).toBe('count="3"');
    expect(expectLetheError(() => parseTaskOptionFlag('=3')).argument).toBe('--task-option');
  });
});
