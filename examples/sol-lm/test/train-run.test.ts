import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holmAdjust, pairedBootstrap } from '@lethe/eval';
import { policyContextOf } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { type SolLoaded, solProvider } from '@lethe/policies-sol';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFrontier } from '../src/frontier-run';
import type { SolRunSettings } from '../src/run-settings';
import { trainSol } from '../src/train-run';

const MODEL = join(__dirname, '../../../models/lm');
const root = mkdtempSync(join(tmpdir(), 'sol-lm-'));

beforeAll(async () => {
  await initBackend('wasm');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const settings: SolRunSettings = {
  model: MODEL,
  actions: '2L',
  horizon: 4,
  prefix: 16,
  batchSize: 2,
  groupSize: 2,
  updates: 3,
  lr: 1e-3,
  penaltyWeights: [100, 100, 200],
  width: 8,
  seed: 1,
};

describe('trainSol', () => {
  it('trains, writes a policy the registry loads, and resumes a stopped run exactly', async () => {
    const straight = join(root, 'straight');
    const result = await trainSol(straight, settings);
    expect(result.stopped).toBe(false);
    expect(result.last?.step).toBe(3);
    const directory = await nodePolicyStore().open(result.policyDir!);
    const prepared = await createDefaultRegistry().prepare('sol', { directory });
    expect(prepared.options.horizon).toBe(4);
    prepared.release();

    const resumed = join(root, 'resumed');
    const controller = new AbortController();
    const stopped = await trainSol(resumed, settings, {
      signal: controller.signal,
      checkpointEvery: 1,
      onProgress: () => controller.abort(),
    });
    expect(stopped).toMatchObject({ stopped: true });
    const finished = await trainSol(resumed, settings);
    expect(finished.stopped).toBe(false);
    const tensors = (run: string) => readFileSync(join(run, 'policy', 'controller.safetensors'));
    expect(tensors(resumed).equals(tensors(straight))).toBe(true);
    await expectLetheRejection(trainSol(resumed, { ...settings, lr: 2e-3 }), 'E_ARG', resumed);
    await expectLetheRejection(trainSol(resumed, { ...settings, updates: 2 }), 'E_ARG', resumed);
    // More updates continue a finished run: as if trained for that many from the start.
    const longer = await trainSol(resumed, { ...settings, updates: 4 });
    expect(longer.last?.step).toBe(4);
    const four = join(root, 'four');
    await trainSol(four, { ...settings, updates: 4 });
    expect(tensors(resumed).equals(tensors(four))).toBe(true);
  });

  it('runs the frontier study: every method at every point, SOL adherence and paired statistics', async () => {
    const policyDir = join(root, 'straight', 'policy');
    const { model, task } = await loadTaskModel(MODEL);
    try {
      if (task.kind !== 'perplexity') throw new Error('not a language model');
      const documents = [0, 1, 2].map((i) =>
        task.tokenizer.encode(task.document(0, i).slice(0, 40), { addBos: true }),
      );
      const directory = await nodePolicyStore().open(policyDir);
      const registry = createDefaultRegistry();
      const sol = await registry.prepare('sol', { directory });
      const { actions } = (await solProvider.learned!.load(directory)) as SolLoaded;
      const { dense, points } = await runFrontier({
        model,
        context: policyContextOf(model, documents.length),
        documents,
        prefill: 8,
        registry,
        sol,
        actions,
        horizon: 4,
        points: [0.3, 0.7],
        randomSchedules: 2,
      });
      sol.release();
      expect(dense.netKeepRate).toBe(1);
      expect(dense.controllerShare).toBe(0);
      expect(points.map((p) => p.methods.map((m) => m.method))).toEqual([
        ['sol', 'sol-fixed', 'sol-emc', 'sol-dac'],
        ['sol', 'sol-fixed', 'sol-emc', 'sol-dac'],
      ]);
      // SOL against each baseline, from the per-document perplexities the result keeps; the
      // p-values Holm-adjusted over the whole frontier
      const comparisons = points.flatMap((p) => p.comparisons);
      const holm = holmAdjust(comparisons.map((c) => c.bootstrap.pValue));
      comparisons.forEach((c, i) => expect(c.holmP).toBe(holm[i]));
      for (const p of points) {
        const sol = p.methods[0]!;
        const against = [
          ...p.methods.slice(1),
          ...(p.bestRandom === undefined ? [] : [p.bestRandom]),
        ];
        expect(p.comparisons.map((c) => c.baseline)).toEqual(against.map((m) => m.method));
        for (const [i, c] of p.comparisons.entries()) {
          expect(c.bootstrap).toEqual(
            pairedBootstrap(sol.perplexities, against[i]!.perplexities, { resamples: 10_000 }),
          );
          expect(c.bootstrap.n).toBe(3);
        }
        expect(p.randomRun).toBe(2);
        for (const m of p.methods) {
          expect(m.perplexity).toBeGreaterThan(1);
          expect(m.netKeepRate).toBeGreaterThan(0);
          expect(m.netKeepRate).toBeLessThanOrEqual(1);
          expect(m.controllerShare).toBeGreaterThan(0);
          expect(m.controllerShare).toBeLessThan(1);
        }
      }
      // A higher operating point asks every axis for more.
      expect(points[1]!.targets.every((t, axis) => t > points[0]!.targets[axis]!)).toBe(true);
    } finally {
      model.dispose();
    }
  });
});
