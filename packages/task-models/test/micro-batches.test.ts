import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection, shellWords } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskModelManifest } from '../src/manifest';
import { parsePretrainFlags } from '../src/pretrain-flags';
import { resolvePretrainSettings } from '../src/pretrain-settings';
import { type PretrainResult, pretrainTaskModel } from '../src/pretrain-task-model';
import { MICRO } from './helpers';

let dir: string;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-micro-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A retrieval run whose batches mix prompt lengths, so parts are trimmed to their own. */
const run = {
  task: 'retrieval',
  taskOptions: { contextChars: 48, valueDigits: 2 },
  modelSize: MICRO,
  steps: 4,
  batchSize: 5,
  lr: 0.02,
  bucketSteps: 1,
  evalExamples: 0,
} as const;

/** Largest absolute difference between two runs' weights. */
function maxDifference(a: PretrainResult, b: PretrainResult): number {
  const theirs = b.model.toTensors();
  let most = 0;
  for (const [name, tensor] of Object.entries(a.model.toTensors())) {
    const other = theirs[name]!.data;
    tensor.data.forEach((value, i) => {
      most = Math.max(most, Math.abs(value - other[i]!));
    });
  }
  return most;
}

describe('pretrain with micro-batches', () => {
  it('trains the whole batch update in parts, records the size and recreates it', async () => {
    const whole = await pretrainTaskModel({ ...run, out: join(dir, 'whole') });
    const parts = await pretrainTaskModel({ ...run, microBatchSize: 2, out: join(dir, 'parts') });
    const start = await pretrainTaskModel({ ...run, steps: 1, lr: 1e-9, out: join(dir, 'start') });
    const most = maxDifference(whole, parts);
    const moved = maxDifference(start, whole);
    expect(most).toBeLessThan(1e-4);
    expect(moved).toBeGreaterThan(1e-2);

    const manifest = parts.manifest!;
    expect(manifest.training.microBatchSize).toBe(2);
    expect(whole.manifest!.training.microBatchSize).toBeUndefined();
    expect(manifest.command).toContain(' --batch-size 5 --micro-batch-size 2 ');
    expect(whole.manifest!.command).not.toContain('--micro-batch-size');
    const parsed = parsePretrainFlags(shellWords(manifest.command).slice(2));
    expect(resolvePretrainSettings(parsed.options).settings).toEqual(parts.settings);
    for (const result of [whole, parts, start]) result.model.dispose();
  });

  it('reads a part of the whole batch as one pass, and refuses a part beyond it', () => {
    const out = join(dir, 'unused');
    expect(
      resolvePretrainSettings({ ...run, microBatchSize: 5, out }).settings.microBatchSize,
    ).toBeUndefined();
    for (const bad of [0, 6, 2.5]) {
      expectLetheError(
        () => resolvePretrainSettings({ ...run, microBatchSize: bad, out }),
        'E_ARG',
        'microBatchSize',
      );
    }
    expect(() => parsePretrainFlags(['--task', 'arithmetic', '--micro-batch-size', 'two'])).toThrow(
      /micro-batch-size/,
    );
  });

  it('keeps a run state to its part size, and refuses a manifest part not below the batch', async () => {
    const state = join(dir, 'parts.state');
    const controller = new AbortController();
    const first = await pretrainTaskModel({
      ...run,
      microBatchSize: 2,
      out: join(dir, 'stopped'),
      checkpointDir: state,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    first.model.dispose();
    await expectLetheRejection(
      pretrainTaskModel({
        ...run,
        microBatchSize: 1,
        out: join(dir, 'stopped'),
        checkpointDir: state,
      }),
      'E_ARG',
      state,
    );

    const one = await pretrainTaskModel({
      ...run,
      steps: 1,
      microBatchSize: 1,
      out: join(dir, 'one'),
    });
    one.model.dispose();
    const json = JSON.parse(JSON.stringify(one.manifest)) as { training: Record<string, unknown> };
    expect(parseTaskModelManifest(json, 'one').training.microBatchSize).toBe(1);
    json.training.microBatchSize = 5;
    const error = expectLetheError(() => parseTaskModelManifest(json, 'one'), 'E_FORMAT', 'one');
    expect(error.message).toMatch(/training\.microBatchSize" must be below training\.batchSize/);
  });
});
