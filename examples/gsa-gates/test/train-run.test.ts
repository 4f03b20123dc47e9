import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GateRunSettings } from '../src/run-settings';
import { trainGates } from '../src/train-run';

const MODEL = join(__dirname, '../../../models/retrieval');
const root = mkdtempSync(join(tmpdir(), 'gsa-gates-'));

beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const settings: GateRunSettings = {
  model: MODEL,
  weights: null,
  granularity: 'head',
  stage1Steps: 2,
  stage2Steps: 3,
  batchSize: 1,
  lr: 3e-3,
  warmup: 1,
  seed: 1,
  attentionWeight: 1,
  gateWeight: 0.5,
  penalty: 'reference',
  entropyWeight: 1,
  initBias: 0,
  retentionWeight: 1,
  retentionBudgets: [0.5, 0.25],
  retentionSinks: 2,
  retentionWindow: 8,
  retentionObservationRows: 4,
};

describe('trainGates', () => {
  it('trains both stages, writes a policy the registry loads, and resumes a stopped run exactly', async () => {
    const straight = join(root, 'straight');
    const result = await trainGates(straight, settings);
    expect(result.stopped).toBe(false);
    expect(result.last.distillation?.step).toBe(2);
    expect(result.last['language-model']?.step).toBe(3);
    expect(result.last['language-model']?.lostAttention).toBeGreaterThanOrEqual(0);
    const prepared = await createDefaultRegistry().prepare('gsa', {
      directory: await nodePolicyStore().open(result.policyDir!),
    });
    expect(prepared.options).toEqual({ sinks: 4, window: 32 });
    prepared.release();

    // Stopped in stage 2 after its first update, then the same call again.
    const resumed = join(root, 'resumed');
    const controller = new AbortController();
    const stopped = await trainGates(resumed, settings, {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.stage === 'language-model') controller.abort();
      },
    });
    expect(stopped.stopped).toBe(true);
    const finished = await trainGates(resumed, settings);
    expect(finished.last.distillation).toBeUndefined();
    const gates = (dir: string) => readFileSync(join(dir, 'policy', 'gates.safetensors'));
    expect(gates(resumed).equals(gates(straight))).toBe(true);
  });

  it('evicts in the loop in stage 2 when told: another gate, and a run tied to the eviction', async () => {
    const plain = { ...settings, stage1Steps: 0, stage2Steps: 2, retentionWeight: 0 };
    const evicting = { ...plain, eviction: { budgets: [0.5], sinks: 2, window: 8 } };
    const gates = (dir: string) => readFileSync(join(dir, 'policy', 'gates.safetensors'));
    const without = join(root, 'without-eviction');
    const withEviction = join(root, 'with-eviction');
    await trainGates(without, plain);
    const result = await trainGates(withEviction, evicting);
    expect(result.last['language-model']?.step).toBe(2);
    expect(gates(withEviction).equals(gates(without))).toBe(false);
    await expectLetheRejection(trainGates(withEviction, plain), 'E_ARG', withEviction);
  });

  it('trains on a variant of the model’s task when given task options, and refuses a bad one', async () => {
    const plain = { ...settings, stage1Steps: 0, stage2Steps: 2, retentionWeight: 0 };
    const shorter = { ...plain, taskOptions: { contextChars: 128 } };
    const gates = (dir: string) => readFileSync(join(dir, 'policy', 'gates.safetensors'));
    const own = join(root, 'own-task');
    const variant = join(root, 'task-variant');
    await trainGates(own, plain);
    await trainGates(variant, shorter);
    expect(gates(variant).equals(gates(own))).toBe(false);
    await expectLetheRejection(trainGates(variant, plain), 'E_ARG', variant);
    await expectLetheRejection(
      trainGates(join(root, 'bad-variant'), { ...plain, taskOptions: { variant: 'no-such' } }),
      'E_ARG',
      'taskOptions',
    );
  });

  it('refuses a run directory recorded for other settings, naming it', async () => {
    const dir = join(root, 'guarded');
    await trainGates(dir, { ...settings, stage1Steps: 0, stage2Steps: 1 });
    await expectLetheRejection(
      trainGates(dir, { ...settings, stage1Steps: 0, stage2Steps: 1, lr: 1e-3 }),
      'E_ARG',
      dir,
    );
  });
});
