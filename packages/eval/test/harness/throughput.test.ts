import type { DecoderModel } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CellEnvironment,
  type Clock,
  FullCacheReferences,
  rollout,
  runCell,
  validateSweepConfig,
} from '../../src/harness/index';
import type { Task } from '../../src/tasks/task';
import { tinyModel, toyLmTask, toyTask, toyTokenizer } from './toy';

let model: DecoderModel;
let clock: Clock;

/**
 * A clock that advances 1 ms for every token `model` runs on (prefill chunks and decode steps,
 * which the runtime runs through the asynchronous calls)
 * and stands still otherwise: any throughput that counts the tokens whose work it timed reads
 * exactly 1000 tokens/s, whatever the batch, the answer lengths or the prefill chunking.
 */
function workClock(target: DecoderModel): Clock {
  let ms = 0;
  const prefill = target.prefillAsync.bind(target);
  const decodeStep = target.decodeStepAsync.bind(target);
  target.prefillAsync = (caches, prompts, options) => {
    for (const prompt of prompts) ms += prompt.length;
    return prefill(caches, prompts, options);
  };
  target.decodeStepAsync = (caches, tokens, controls, options) => {
    ms += tokens.length;
    return decodeStep(caches, tokens, controls, options);
  };
  return () => ms;
}

beforeAll(async () => {
  await initBackend('wasm');
  model = tinyModel(3);
  clock = workClock(model);
});

afterAll(() => {
  model.dispose();
});

describe('rollout', () => {
  it('reports the tokens the model ran on, prefill included, and the clock time of that work', async () => {
    const prompts = ['abca', 'bcdefgh', 'hh'].map((text) =>
      toyTokenizer.encode(text, { addBos: true }),
    );
    const batch = await rollout({
      model,
      prompts,
      streamIds: [0, 1, 2],
      maxNewTokens: 5,
      sampling: { temperature: 1 },
      seed: 3,
      stop: { stopSequences: [toyTokenizer.encode('a')] },
      policies: {},
      prefillChunk: 3,
      clock,
    });
    const generated = batch.sequences.map((s) => s.tokens.length);
    expect(batch.generatedTokens).toBe(generated.reduce((a, b) => a + b, 0));
    // Each prompt token, then each generated token but a sequence's last is fed back.
    const fed = generated.reduce((sum, n) => sum + n - 1, 0);
    expect(batch.processedTokens).toBe(prompts.reduce((sum, p) => sum + p.length, 0) + fed);
    expect(batch.elapsedMs).toBe(batch.processedTokens);
  });
});

describe('tokensPerSecond', () => {
  /** Scenarios whose batches do very different work: one-token answers (no decode step at all), longer answers with a chunked prefill, teacher-forced documents. */
  const scenarios: { name: string; task: Task; extra: Record<string, unknown> }[] = [
    { name: 'one-token answers', task: toyTask({ maxNewTokens: 1 }), extra: {} },
    {
      name: 'answers of up to 6 tokens, prefill in chunks of 2',
      task: toyTask({ maxNewTokens: 6, stopText: 'a' }),
      extra: { prefillChunk: 2 },
    },
    { name: 'teacher-forced documents', task: toyLmTask(), extra: {} },
  ];

  for (const { name, task, extra } of scenarios) {
    it(`counts the same work it times in every cell: ${name}`, async () => {
      const config = validateSweepConfig({
        tasks: [task.name],
        policies: ['full', 'streaming-llm', 'h2o'],
        budgets: [0.5, 0.25],
        seeds: [0],
        examplesPerCell: 5,
        batchSize: 2,
        ...extra,
      });
      const env: CellEnvironment = {
        task,
        model,
        config,
        registry: createDefaultRegistry(),
        clock,
        references: new FullCacheReferences(),
      };
      const keys = [
        { task: task.name, policy: 'full', budget: 1, seed: 0 },
        ...['streaming-llm', 'h2o'].flatMap((policy) =>
          [0.5, 0.25].map((budget) => ({ task: task.name, policy, budget, seed: 0 })),
        ),
      ];
      for (const key of keys) {
        const { tokensPerSecond } = (await runCell(key, env)).metrics;
        expect({ key, mean: tokensPerSecond.mean, stderr: tokensPerSecond.stderr }).toEqual({
          key,
          mean: 1000,
          stderr: 0,
        });
        expect(tokensPerSecond.n).toBeGreaterThanOrEqual(3);
      }
    });
  }
});
