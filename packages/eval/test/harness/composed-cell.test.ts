import type { DecoderModel } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CellEnvironment,
  FullCacheReferences,
  runCell,
  validateSweepConfig,
} from '../../src/harness/index';
import { steppingClock, tinyModel, toyLmTask, toyTask } from './toy';

let model: DecoderModel;

beforeAll(async () => {
  await initBackend('wasm');
  model = tinyModel(1);
});

afterAll(() => {
  model.dispose();
});

const FIXED = { name: 'sol-fixed', options: { refresh: false } };

/** A sweep of `task` with H2O alone, SOL's fixed schedule alone and both composed. */
function environment(task: 'toy' | 'toy-lm'): CellEnvironment {
  const config = validateSweepConfig({
    tasks: [task],
    policies: [
      'full',
      'h2o',
      { ...FIXED, label: 'fixed' },
      { compose: ['h2o', FIXED] },
      // SOL at a pinned 100%: its dense schedule, whatever the cell's fraction
      { compose: ['h2o', { ...FIXED, budget: 1 }], label: 'h2o+dense' },
      { compose: ['h2o', { name: 'sol-fixed' }], label: 'h2o+refreshing' },
    ],
    budgets: [0.25],
    seeds: [2],
    examplesPerCell: 4,
    samplesPerExample: 1,
    batchSize: 4,
  });
  return {
    task: task === 'toy' ? toyTask({ stopText: '....' }) : toyLmTask(),
    model,
    config,
    registry: createDefaultRegistry(),
    clock: steppingClock(),
    references: new FullCacheReferences(),
  };
}

const cell = (env: CellEnvironment, policy: string) =>
  runCell({ task: env.task.name, policy, budget: 0.25, seed: 2 }, env);

describe('a composed cell', () => {
  for (const task of ['toy-lm', 'toy'] as const) {
    it(`runs the eviction and the compute part each under its budget (${task})`, async () => {
      const env = environment(task);
      const before = tf.memory().numTensors;
      const h2o = await cell(env, 'h2o');
      const fixed = await cell(env, 'fixed');
      const both = await cell(env, 'h2o+sol-fixed');
      const dense = await cell(env, 'h2o+dense');
      expect(tf.memory().numTensors).toBe(before);
      // SOL pinned at 100% changes nothing: the composition is H2O alone, bit for bit — but
      // on documents the net keep-rate counts SOL's knobs too (attention by the reads H2O left,
      // MLP and precision at 1), as for SOL alone
      const { netKeepRate: denseRate, tokensPerSecond: _, ...denseRest } = dense.metrics;
      const { netKeepRate: h2oRate, tokensPerSecond: __, ...h2oRest } = h2o.metrics;
      expect(denseRest).toEqual(h2oRest);
      if (task === 'toy') expect(denseRate).toEqual(h2oRate);
      else expect(denseRate!.mean).toBeCloseTo((h2oRate!.mean + 2) / 3, 12);
      // at the cell's 25%, the compute part reads less of what H2O keeps than at 100% (little on
      // the toy task, whose few kept entries are mostly SOL's always-read sinks and window)
      expect(both.metrics.netKeepRate!.mean).toBeLessThan(denseRate!.mean);
      // and H2O holds the memory as it does alone
      const held = both.metrics.realisedBudget!.mean;
      expect(held).toBeLessThan(0.5);
      expect(fixed.metrics.realisedBudget!.mean).toBe(1);
      if (task === 'toy-lm') {
        expect(both.metrics.peakKvReduction).toEqual(h2o.metrics.peakKvReduction);
        expect(both.metrics.perplexity!.mean).not.toBe(h2o.metrics.perplexity!.mean);
      }
    });
  }

  it('refuses a compute part that refreshes its entries beside the eviction part', async () => {
    const env = environment('toy-lm');
    const before = tf.memory().numTensors;
    await expectLetheRejection(
      cell(env, 'h2o+refreshing'),
      'E_ARG',
      'sets[1].compute.refreshEvery',
    );
    expect(tf.memory().numTensors).toBe(before);
  });
});
