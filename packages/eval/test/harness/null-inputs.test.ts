import { createDefaultRegistry } from '@lethe/policies';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CellEnvironment,
  type CellKey,
  cacheMetrics,
  capacityFor,
  cellConfig,
  cellId,
  emptyResults,
  encodeText,
  estimateRemainingMs,
  FullCacheReferences,
  fullCacheLength,
  fullPeakPerHead,
  knownPolicies,
  logProbability,
  parseEvalFlags,
  planBatches,
  planGeneration,
  prefillChunkOf,
  reproduceCommand,
  rollout,
  runCell,
  type SweepConfig,
  serializeResults,
  sweepCells,
  teacherForce,
  throughput,
  validateCellKey,
  validateSweepConfig,
} from '../../src/harness/index';
import { checkpointModels, readResultsFile, runSweep } from '../../src/harness/node';
import { tinyModel, toyTask } from './toy';

// Inputs typed away by TypeScript but reachable from JavaScript and parsed JSON.
const NULL = null as never;
const UNDEFINED = undefined as never;

const base = { tasks: ['toy'], policies: ['full', 'h2o'], budgets: [0.5], seeds: [0] };
const config = validateSweepConfig({ ...base, examplesPerCell: 1 });
const key: CellKey = { task: 'toy', policy: 'h2o', budget: 0.5, seed: 0 };

beforeAll(async () => {
  await initBackend('wasm');
});

describe('null and undefined inputs to the harness get coded errors, not TypeErrors', () => {
  it('budgets and capacities', () => {
    for (const missing of [NULL, UNDEFINED]) {
      expectLetheError(() => capacityFor(missing, 10), 'E_BUDGET', 'budget');
      expectLetheError(() => capacityFor(0.5, missing), 'E_ARG', 'fullPeak');
      expectLetheError(() => fullCacheLength(missing, 4), 'E_ARG', 'promptTokens');
      expectLetheError(() => fullPeakPerHead(missing, 2), 'E_ARG', 'peakTotal');
      expectLetheError(() => fullPeakPerHead(4, missing), 'E_ARG', 'heads');
    }
  });

  it('cell keys', async () => {
    for (const missing of [NULL, UNDEFINED]) {
      expectLetheError(() => validateCellKey(missing), 'E_ARG', 'key');
      expectLetheError(() => validateCellKey({ ...key, budget: missing }), 'E_BUDGET', 'budget');
      expectLetheError(() => validateCellKey({ ...key, seed: missing }), 'E_ARG', 'seed');
      expectLetheError(() => validateCellKey({ ...key, task: missing }), 'E_ARG', 'task');
      expectLetheError(() => cellId(missing), 'E_ARG', 'key');
      expectLetheError(() => cellConfig(missing, config), 'E_ARG', 'key');
      expectLetheError(() => reproduceCommand({ ...key, budget: missing }, config), 'E_BUDGET');
      await expectLetheRejection(runCell(missing, NULL), 'E_ARG', 'key');
      await expectLetheRejection(runCell({ ...key, budget: missing }, NULL), 'E_BUDGET', 'budget');
    }
  });

  it('sweep config fields that are null where the normalised config never writes null', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ budgets: [null] }, 'E_BUDGET', 'budgets[0]'],
      [{ budgets: null }, 'E_ARG', 'budgets'],
      [{ seeds: [null] }, 'E_ARG', 'seeds[0]'],
      [{ examplesPerCell: null }, 'E_ARG', 'examplesPerCell'],
      [{ samplesPerExample: null }, 'E_ARG', 'samplesPerExample'],
      [{ passAtK: null }, 'E_ARG', 'passAtK'],
      [{ batchSize: null }, 'E_ARG', 'batchSize'],
      [{ checkpoints: null }, 'E_ARG', 'checkpoints'],
      [{ checkpoints: { toy: null } }, 'E_ARG', 'checkpoints.toy'],
      [{ sampling: null }, 'E_ARG', 'sampling'],
      [{ sampling: { temperature: null } }, 'E_ARG', 'sampling.temperature'],
      [{ sampling: { topK: null } }, 'E_ARG', 'sampling.topK'],
      [{ sampling: { topP: null } }, 'E_ARG', 'sampling.topP'],
      [{ tasks: [null] }, 'E_ARG', 'tasks[0]'],
      [{ tasks: [{ name: 'toy', options: null }] }, 'E_ARG', 'tasks[0].options'],
      [{ tasks: [{ name: 'toy', budgets: null }] }, 'E_ARG', 'tasks[0].budgets'],
      [{ tasks: [{ name: 'toy', budgets: [null] }] }, 'E_BUDGET', 'tasks[0].budgets[0]'],
      [{ policies: [null] }, 'E_ARG', 'policies[0]'],
      [{ policies: [{ name: null }] }, 'E_ARG', 'policies[0].name'],
      [{ policies: [{ name: 'h2o', label: null }] }, 'E_ARG', 'policies[0].label'],
      [{ policies: [{ name: 'h2o', options: null }] }, 'E_ARG', 'policies[0].options'],
    ];
    for (const [fields, code, argument] of cases) {
      expectLetheError(
        () => validateSweepConfig({ ...base, examplesPerCell: 1, ...fields }),
        code,
        argument,
      );
    }
    expectLetheError(() => validateSweepConfig(NULL), 'E_ARG', 'config');
    expectLetheError(() => validateSweepConfig(base, NULL), 'E_ARG', 'known');
    expectLetheError(
      () => validateSweepConfig(base, { policies: NULL as unknown as string[] }),
      'E_ARG',
      'known.policies',
    );
    // Where the normalised config itself writes null, null is the default.
    const normalised = validateSweepConfig({
      ...base,
      examplesPerCell: 1,
      rateEvery: null,
      prefillChunk: null,
      policies: [{ name: 'h2o', dir: null, tasks: null }],
    });
    expect(validateSweepConfig(normalised)).toEqual(normalised);
  });

  it('functions taking a config, results, flags or batches', () => {
    for (const missing of [NULL, UNDEFINED]) {
      expectLetheError(() => sweepCells(missing), 'E_ARG', 'config');
      expectLetheError(() => cellConfig(key, missing), 'E_ARG', 'config');
      expectLetheError(() => reproduceCommand(key, missing), 'E_ARG', 'config');
      expectLetheError(() => prefillChunkOf(missing, 'toy'), 'E_ARG', 'config');
      expectLetheError(() => emptyResults(missing), 'E_ARG', 'config');
      expectLetheError(() => serializeResults(missing), 'E_ARG', 'results');
      expectLetheError(() => parseEvalFlags(missing), 'E_ARG', 'args');
      expectLetheError(() => planBatches(missing, 2, false), 'E_ARG', 'lengths');
      expectLetheError(() => throughput(missing), 'E_ARG', 'batches');
      expectLetheError(() => throughput([missing]), 'E_ARG', 'batches[0]');
      expectLetheError(
        () => throughput([{ tokens: missing, ms: 1 }]),
        'E_ARG',
        'batches[0].tokens',
      );
      expectLetheError(() => cacheMetrics(missing, [], 8), 'E_ARG', 'traces');
      expectLetheError(() => knownPolicies(missing), 'E_ARG', 'registry');
      expectLetheError(() => checkpointModels(missing), 'E_ARG', 'checkpoints');
      expectLetheError(() => logProbability(missing, 0), 'E_ARG', 'logits');
      expectLetheError(() => encodeText(missing, 'abc'), 'E_ARG', 'tokenizer');
      expectLetheError(() => planGeneration(missing, 1, 1, 0), 'E_ARG', 'task');
      expectLetheError(() => estimateRemainingMs(missing, 1, 1), 'E_ARG', 'elapsedMs');
      expectLetheError(() => new FullCacheReferences().get('toy', 0, missing), 'E_ARG', 'compute');
    }
    expectLetheError(() => parseEvalFlags(['--task', NULL]), 'E_ARG', 'args');
    expectLetheError(() => createDefaultRegistry(NULL), 'E_ARG', 'extra');
    expectLetheError(() => planGeneration(toyTask(), NULL, 1, 0), 'E_ARG', 'examplesPerCell');
    // An empty plan stays valid: callers take its stop conditions.
    expect(planGeneration(toyTask(), 0, 1, 0).prompts).toEqual([]);
    // A batch size of null used to loop forever.
    expectLetheError(() => planBatches([3, 4], NULL, false), 'E_ARG', 'batchSize');
  });

  it('cell environments, rollouts and sweeps', async () => {
    const model = tinyModel(1);
    try {
      const env: CellEnvironment = {
        task: toyTask(),
        model,
        config: validateSweepConfig({ ...base, examplesPerCell: 1 }),
        registry: createDefaultRegistry(),
        clock: () => 0,
      };
      for (const missing of [NULL, UNDEFINED]) {
        await expectLetheRejection(runCell(key, missing), 'E_ARG', 'env');
        for (const field of ['task', 'model', 'config', 'registry', 'clock'] as const) {
          await expectLetheRejection(
            runCell(key, { ...env, [field]: missing }),
            'E_ARG',
            `env.${field}`,
          );
        }
        await expectLetheRejection(rollout(missing), 'E_ARG', 'options');
        await expectLetheRejection(teacherForce(missing), 'E_ARG', 'options');
        await expectLetheRejection(runSweep(missing), 'E_ARG', 'config');
        await expectLetheRejection(readResultsFile(missing, config), 'E_ARG', 'path');
      }
      await expectLetheRejection(
        runSweep({ ...base, examplesPerCell: 1 } as unknown as SweepConfig, NULL),
        'E_ARG',
        'options',
      );
      await expectLetheRejection(
        rollout({
          model,
          prompts: [encodeText(toyTask().tokenizer, 'ab')],
          streamIds: [0],
          maxNewTokens: 2,
          sampling: {},
          seed: 0,
          stop: {},
          policies: NULL,
          clock: () => 0,
        }),
        'E_ARG',
        'policies',
      );
      await expectLetheRejection(
        teacherForce({
          model,
          documents: [encodeText(toyTask().tokenizer, 'abc')],
          streamIds: [0],
          seed: 0,
          policies: {},
          clock: NULL,
        }),
        'E_ARG',
        'clock',
      );
    } finally {
      model.dispose();
    }
  });
});
