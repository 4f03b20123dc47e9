import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeText, planGeneration } from '@lethe/eval';
import { generate, policyContextOf } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { type SolLoaded, solProvider } from '@lethe/policies-sol';
import { trainingSeed } from '@lethe/task-models';
import { loadTaskBackbone } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerDocuments } from '../src/answer-documents';
import { runDownstream } from '../src/downstream-run';
import { resolveRunSettings, type SolRunSettings } from '../src/run-settings';
import { trainSol } from '../src/train-run';

const MODELS = join(__dirname, '../../../models');
const COUNTDOWN = join(MODELS, 'countdown');
const root = mkdtempSync(join(tmpdir(), 'sol-downstream-'));

beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const settings: SolRunSettings = {
  model: COUNTDOWN,
  weights: join(MODELS, 'countdown-rl'),
  actions: 'C-10',
  horizon: 4,
  answers: 6,
  batchSize: 2,
  groupSize: 2,
  updates: 2,
  lr: 1e-3,
  penaltyWeights: [1000, 1000, 2000],
  width: 8,
  seed: 1,
};

describe('resolveRunSettings', () => {
  it('fills in the default of the task’s kind and refuses the other kind’s flag', () => {
    const { answers: _, weights: __, ...bare } = settings;
    expect(resolveRunSettings(bare, 'generation').answers).toBe(512);
    expect(resolveRunSettings(bare, 'perplexity').prefix).toBe(128);
    expectLetheError(() => resolveRunSettings(settings, 'perplexity'), 'E_ARG', '--answers');
    expectLetheError(
      () => resolveRunSettings({ ...bare, prefix: 8 }, 'generation'),
      'E_ARG',
      '--prefix',
    );
  });
});

describe('answerDocuments', () => {
  it('appends the model’s own greedy answer to each training prompt; episodes start after the prompt', async () => {
    const taskModel = await loadTaskBackbone(settings.model, settings.weights);
    const { model, task } = taskModel;
    try {
      if (task.kind !== 'generation') throw new Error('not a generation task');
      const { documents, tooShort } = await answerDocuments(taskModel, 1, 3, 4);
      expect(documents.length + tooShort).toBe(3);
      const prompts = [0, 1, 2].map((i) =>
        encodeText(task.tokenizer, task.example(trainingSeed(1), i).prompt),
      );
      // A second, independent generation of the same prompts, one at a time.
      const answers = await Promise.all(
        prompts.map(async (prompt) => {
          const result = await generate({
            model,
            prompts: [prompt],
            maxNewTokens: task.maxNewTokens,
            sampling: { temperature: 0 },
            stop: planGeneration(task, 0, 1, 0).stop,
          });
          return result.tokens[0]!;
        }),
      );
      documents.forEach((document, i) => {
        const prompt = prompts[i]!;
        expect([...document.tokens]).toEqual([...prompt, ...answers[i]!]);
        expect(document.prefix).toEqual({ min: prompt.length, max: document.tokens.length - 5 });
        const completion = task.tokenizer.decode(answers[i]!, { skipSpecialTokens: true });
        expect(completion.endsWith(task.stopText)).toBe(true);
      });
      await expectLetheRejection(answerDocuments(taskModel, 1, 0, 4), 'E_ARG', 'count');
      await expectLetheRejection(answerDocuments(taskModel, 1, 2, 4000), 'E_ARG', 'horizon');
    } finally {
      model.dispose();
    }
  });
});

describe('SOL on a generation task', () => {
  it('trains on the model’s answers and runs the downstream study at matched budgets', async () => {
    const result = await trainSol(join(root, 'run'), settings);
    expect(result.stopped).toBe(false);
    await expectLetheRejection(
      trainSol(join(root, 'run'), { ...settings, answers: 7 }),
      'E_ARG',
      join(root, 'run'),
    );
    const { model, task } = await loadTaskBackbone(settings.model, settings.weights);
    try {
      if (task.kind !== 'generation') throw new Error('not a generation task');
      const directory = await nodePolicyStore().open(result.policyDir!);
      const registry = createDefaultRegistry();
      const sol = await registry.prepare('sol', { directory });
      const { actions } = (await solProvider.learned!.load(directory)) as SolLoaded;
      const { dense, points } = await runDownstream({
        model,
        task,
        context: policyContextOf(model, 3),
        registry,
        sol,
        actions,
        horizon: 4,
        examples: 3,
        points: [0.3],
        batchSize: 2,
      });
      sol.release();
      expect(dense.netKeepRate).toBe(1);
      expect(dense.controllerShare).toBe(0);
      const [{ methods, solVsFixed, targets }] = points as [(typeof points)[0]];
      expect(targets[0]).toBeCloseTo(0.37, 12);
      expect(methods.map((m) => m.method)).toEqual(['sol', 'sol-fixed']);
      expect(solVsFixed.n).toBe(3);
      expect(solVsFixed.accuracyA).toBe(methods[0].accuracy);
      expect(solVsFixed.accuracyB).toBe(methods[1].accuracy);
      for (const m of methods) {
        expect(m.realised[0]).toBeGreaterThan(0);
        expect(m.realised[0]).toBeLessThan(1);
        expect(m.realised.slice(1)).toEqual([1, 1]);
        expect(m.netKeepRate).toBe(m.realised[0]);
        expect(m.interval.low).toBeLessThanOrEqual(m.accuracy);
        expect(m.interval.high).toBeGreaterThanOrEqual(m.accuracy);
      }
      // The fixed schedule spends what SOL realised (adjacent levels mixed per sequence).
      expect(Math.abs(methods[1].netKeepRate - methods[0].netKeepRate)).toBeLessThan(0.1);
    } finally {
      model.dispose();
    }
  });
});
