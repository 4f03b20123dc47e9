import { readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LetheError } from '@lethe/core';
import { SUITE_MEMBERS } from '@lethe/eval';
import { initBackend } from '@lethe/tensor';
import { shellWords } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTaskModel } from '../src/load-task-model';
import { TASK_MODEL_FILE } from '../src/manifest';
import { parsePretrainFlags } from '../src/pretrain-flags';
import { resolvePretrainSettings } from '../src/pretrain-settings';
import { pretrainTaskModel } from '../src/pretrain-task-model';
import { MICRO } from './helpers';

let dir: string;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-pretrain-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pretrainTaskModel', () => {
  it('trains an arithmetic micro model, saves a task-model directory and loads it back', async () => {
    const out = join(dir, 'arithmetic');
    const losses: number[] = [];
    const result = await pretrainTaskModel({
      task: 'arithmetic',
      taskOptions: { steps: 2 },
      modelSize: MICRO,
      steps: 8,
      batchSize: 4,
      lr: 0.02,
      evalExamples: 3,
      out,
      onProgress: (p) => losses.push(p.loss),
    });
    expect(result.stopped).toBe(false);
    expect(losses).toHaveLength(8);
    expect(losses[7]!).toBeLessThan(losses[0]!);
    expect((await readdir(out)).sort()).toEqual([
      'config.json',
      TASK_MODEL_FILE,
      'model.safetensors',
      'tokenizer.json',
    ]);
    const manifest = result.manifest!;
    expect(manifest.task).toEqual({
      name: 'arithmetic',
      options: { steps: 2 },
      resolved: { steps: 2, maxOperand: 9, maxValue: 99 },
    });
    expect(manifest.training).toMatchObject({
      seed: 1,
      trainingSeed: 1_000_001,
      steps: 8,
      batchSize: 4,
      backend: 'wasm',
      finalLoss: losses[7],
    });
    const evaluation = manifest.evaluation!;
    expect(evaluation).toMatchObject({
      policy: 'full',
      seed: 0,
      examples: 3,
      metric: 'accuracy',
      n: 3,
    });
    expect(evaluation.command).toContain(`--policy full --budget 1 --seed 0 --examples 3`);
    expect(evaluation.command).toContain(`--checkpoint ${out}`);

    // The recorded command parses back into the same settings.
    const words = shellWords(manifest.command);
    expect(words.slice(0, 2)).toEqual(['lethe', 'pretrain']);
    const parsed = parsePretrainFlags(words.slice(2));
    expect(parsed.backend).toBe('wasm');
    expect(resolvePretrainSettings(parsed.options).settings).toEqual(result.settings);

    const loaded = await loadTaskModel(out);
    expect(loaded.manifest).toEqual(manifest);
    expect(loaded.task.name).toBe('arithmetic');
    expect(loaded.tokenizer.toJSON()).toEqual(result.tokenizer.toJSON());
    expect(loaded.model.toTensors()).toEqual(result.model.toTensors());
    loaded.model.dispose();
    result.model.dispose();
  });

  it('trains a retrieval micro model on needle-in-a-haystack prompts', async () => {
    const out = join(dir, 'retrieval');
    const result = await pretrainTaskModel({
      task: 'retrieval',
      taskOptions: { variant: 'niah-single', contextChars: 96 },
      modelSize: MICRO,
      steps: 3,
      batchSize: 2,
      evalExamples: 2,
      seed: 5,
      out,
    });
    expect(result.manifest!.training.trainingSeed).toBe(1_000_005);
    expect(result.manifest!.evaluation!.command).toContain(
      `--task-options '{"variant":"niah-single","contextChars":96}'`,
    );
    const loaded = await loadTaskModel(out);
    expect(loaded.task.options).toMatchObject({ variant: 'niah-single', contextChars: 96 });
    expect(loaded.model.toTensors()).toEqual(result.model.toTensors());
    loaded.model.dispose();
    result.model.dispose();
  });

  it('trains one model on the suite and scores each member of the mixture', async () => {
    const out = join(dir, 'suite');
    const result = await pretrainTaskModel({
      task: 'suite',
      taskOptions: { contextChars: 256 },
      modelSize: MICRO,
      steps: 2,
      batchSize: 2,
      evalExamples: 12,
      evalBatchSize: 12,
      out,
    });
    const evaluation = result.manifest!.evaluation!;
    expect(Object.keys(evaluation.members!)).toEqual([...SUITE_MEMBERS]);
    const tallies = Object.values(evaluation.members!);
    expect(tallies.map((t) => t.total)).toEqual([2, 2, 2, 2, 2, 2]);
    const solved = tallies.reduce((sum, t) => sum + t.correct, 0);
    expect(solved).toBe(Math.round(evaluation.mean * evaluation.n));
    const loaded = await loadTaskModel(out);
    expect(loaded.manifest.evaluation!.members).toEqual(evaluation.members);
    // The suite's BPE is written as a Hugging Face tokenizer and read back as the task's.
    expect(readdirSync(out)).toContain('tokenizer_config.json');
    expect(loaded.tokenizer.toJSON()).toEqual(loaded.task.tokenizer.toJSON());
    loaded.model.dispose();
    result.model.dispose();
    // The next stage of a length curriculum starts from it.
    const longer = await pretrainTaskModel({
      task: 'suite',
      taskOptions: { contextChars: 512 },
      modelSize: MICRO,
      init: out,
      steps: 1,
      batchSize: 2,
      evalExamples: 0,
      out: join(dir, 'suite-512'),
    });
    expect(longer.manifest!.training.init?.dir).toBe(out);
    longer.model.dispose();
  });

  it('resumes after an abort with bit-identical parameters', async () => {
    const settings = {
      task: 'arithmetic',
      taskOptions: { steps: 2 },
      modelSize: MICRO,
      steps: 6,
      batchSize: 3,
      evalExamples: 1,
    } as const;
    const straight = await pretrainTaskModel({ ...settings, out: join(dir, 'straight') });
    straight.model.dispose();

    const state = join(dir, 'resumed.state');
    const out = join(dir, 'resumed');
    const controller = new AbortController();
    const first = await pretrainTaskModel({
      ...settings,
      out,
      checkpointDir: state,
      checkpointEvery: 2,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.step === 3) controller.abort();
      },
    });
    first.model.dispose();
    expect([first.stopped, first.step, first.manifest]).toEqual([true, 3, undefined]);
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
    expect(await readdir(state)).toContain('sft-checkpoint.safetensors');

    // The state belongs to this run: other settings are refused rather than mixed in.
    const other = await pretrainTaskModel({
      ...settings,
      steps: 7,
      out,
      checkpointDir: state,
    }).then(
      () => undefined,
      (error: unknown) => error as LetheError,
    );
    expect([other?.code, other?.argument]).toEqual(['E_ARG', state]);
    expect(other?.message).toMatch(/setting "steps" was 6, now 7/);

    const steps: number[] = [];
    const second = await pretrainTaskModel({
      ...settings,
      out,
      checkpointDir: state,
      checkpointEvery: 2,
      onProgress: (p) => steps.push(p.step),
    });
    second.model.dispose();
    expect(steps).toEqual([4, 5, 6]);
    expect(await readFile(join(out, 'model.safetensors'))).toEqual(
      await readFile(join(dir, 'straight', 'model.safetensors')),
    );
    expect(second.manifest!.training.finalLoss).toBe(straight.manifest!.training.finalLoss);
    expect(second.manifest!.evaluation!.mean).toBe(straight.manifest!.evaluation!.mean);
  });

  it('replaces an earlier model directory as a whole and refuses a foreign one', async () => {
    const out = join(dir, 'replaced');
    for (const seed of [1, 2]) {
      const run = await pretrainTaskModel({
        task: 'arithmetic',
        taskOptions: { steps: 1 },
        modelSize: MICRO,
        steps: 2,
        batchSize: 2,
        evalExamples: 0,
        seed,
        out,
      });
      run.model.dispose();
    }
    const loaded = await loadTaskModel(out);
    expect(loaded.manifest.training.seed).toBe(2);
    expect(loaded.manifest.evaluation).toBeNull();
    loaded.model.dispose();
    expect(
      (await readdir(dir)).filter((name) => name.includes('.partial-') || name.includes('.old-')),
    ).toEqual([]);

    const error = await pretrainTaskModel({
      task: 'arithmetic',
      modelSize: MICRO,
      steps: 2,
      batchSize: 2,
      evalExamples: 0,
      out: dir,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/holds files a model directory does not/);
  });
});
