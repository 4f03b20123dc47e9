import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GenerationTask, planGeneration } from '@lethe/eval';
import { generate } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHECKPOINT_FILE,
  type EvolveSettings,
  evolutionStages,
  evolveRun,
} from '../src/evolve-run';
import { EVOLUTION_SEED, generationNammTask } from '../src/generation-namm-task';
import { RETRIEVAL_MODEL, smallRun } from './small-run';

const MODEL = RETRIEVAL_MODEL;
const out = mkdtempSync(join(tmpdir(), 'namm-evolve-'));

beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the retrieval task as a NammTask', () => {
  it('draws evolution examples from their own seeds and scores as the task verifies', async () => {
    const { model, task } = await loadTaskModel(MODEL);
    const generationTask = task as GenerationTask;
    const namm = generationNammTask(generationTask);
    const example = namm.example(3, 5);
    expect([example.seed, example.index]).toEqual([EVOLUTION_SEED + 3, 5]);
    expect(namm.key(example)).toBe(`${EVOLUTION_SEED + 3}:5`);
    // The harness's prompt and stop conditions, and its verdicts on the full cache's completions.
    const plan = planGeneration(generationTask, 0, 1, 0);
    expect(namm.stop).toEqual(plan.stop);
    const examples = [0, 1, 2, 3].map((i) => namm.example(0, i));
    const result = await generate({
      model,
      prompts: examples.map((e) => namm.prompt(e)),
      maxNewTokens: namm.maxNewTokens,
      sampling: { temperature: 0 },
      stop: namm.stop,
    });
    examples.forEach((e, b) => {
      const text = generationTask.tokenizer.decode(result.tokens[b]!, { skipSpecialTokens: true });
      expect(namm.score(e, result.tokens[b]!)).toBe(generationTask.verify(e, text).correct ? 1 : 0);
    });
    model.dispose();
  });
});

const settings = (generations: number): EvolveSettings => smallRun(out, generations, 2);

describe('evolveRun', () => {
  it('writes a checkpoint and a policy directory the registry loads, and resumes', async () => {
    const first = await evolveRun(settings(1));
    expect(first).toHaveLength(1);
    const checkpoint = JSON.parse(readFileSync(join(out, CHECKPOINT_FILE), 'utf8'));
    expect(checkpoint.generation).toBe(1);
    const prepared = await createDefaultRegistry().prepare('namm', {
      directory: await nodePolicyStore().open(out),
    });
    expect(prepared.options).toMatchObject({ updateInterval: 64 });
    // The same command with more generations continues from the checkpoint.
    const more = await evolveRun(settings(2));
    expect(more).toHaveLength(2);
    expect({ ...more[0], seconds: 0 }).toEqual({ ...first[0], seconds: 0 });
  });
});

describe('the task a run evolves on', () => {
  it("takes options over the model's task's, records them in the checkpoint and refuses a resume on others", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'namm-task-options-'));
    const base: EvolveSettings = { ...settings(1), out: dir, features: 'age' };
    try {
      const history = await evolveRun({ ...base, taskOptions: { contextChars: 200 } });
      expect(Object.keys(history[0]!.meanScores)).toEqual(['retrieval']);
      const checkpoint = JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8'));
      expect(JSON.parse(checkpoint.settings.taskDefinitions.retrieval)).toEqual({
        task: 'retrieval',
        options: { variant: 'niah-single', contextChars: 200, depth: 'random', valueDigits: 2 },
      });
      // the same options resume; other options, or none, would score other examples
      expect(
        await evolveRun({ ...base, generations: 2, taskOptions: { contextChars: 200 } }),
      ).toHaveLength(2);
      for (const taskOptions of [{ contextChars: 220 }, undefined]) {
        await expect(evolveRun({ ...base, generations: 3, taskOptions })).rejects.toMatchObject({
          code: 'E_CHECKPOINT',
          argument: 'tasks',
        });
      }
      await expect(
        evolveRun({ ...base, out: join(dir, 'bad'), taskOptions: { variant: 'no-such' } }),
      ).rejects.toMatchObject({ argument: expect.stringMatching(/^taskOptions/) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tasks and stages', () => {
  it('splits an incremental run evenly, the remainder to the last stage', () => {
    expect(evolutionStages(['a', 'b'], 7, false)).toEqual([{ tasks: ['a', 'b'], generations: 7 }]);
    expect(evolutionStages(['a', 'b', 'c'], 7, true)).toEqual([
      { tasks: ['a'], generations: 2 },
      { tasks: ['b'], generations: 2 },
      { tasks: ['c'], generations: 3 },
    ]);
    expect(() => evolutionStages(['a', 'b'], 1, true)).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'generations' }),
    );
  });

  it('evolves on a variant of the task too, adding it at the second stage when incremental', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'namm-stages-'));
    const base: EvolveSettings = {
      ...settings(2),
      out: dir,
      promptsPerTask: 2,
      features: 'age',
    };
    try {
      const history = await evolveRun({
        ...base,
        extraTasks: [{ label: 'short', options: { contextChars: 200 } }],
        incremental: true,
      });
      expect(history.map((r) => [r.stage, Object.keys(r.meanScores)])).toEqual([
        [0, ['retrieval']],
        [1, ['retrieval', 'short']],
      ]);
      await expect(
        evolveRun({
          ...base,
          extraTasks: [{ label: 'retrieval', options: {} }],
        }),
      ).rejects.toMatchObject({ code: 'E_ARG', argument: 'extraTasks[0].label' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
