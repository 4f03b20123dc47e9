import { join } from 'node:path';
import type { CellResult, GenerationTask, SweepResults } from '@lethe/eval';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { layerProfiles } from '../src/layer-profile';
import {
  type MatchedStudySettings,
  matchedBudget,
  matchedBudgets,
  matchedStudy,
  matchedSweep,
  nammSweep,
} from '../src/matched-budgets';
import { studyReport } from '../src/study-report';

const MODELS = join(__dirname, '../../../models');

beforeAll(async () => {
  await initBackend('wasm');
});

const settings: MatchedStudySettings = {
  model: 'm',
  policy: 'p',
  budgets: [1, 0.5, 0.25],
  examples: 4,
  seed: 3,
  prefillChunk: 16,
};

function cell(policy: string, budget: number, accuracy: number, realised: number): CellResult {
  const aggregate = (mean: number) => ({ mean, stderr: 0.01, n: 4 });
  return {
    key: { task: 'retrieval', policy, budget, seed: 3 },
    metrics: {
      accuracy: aggregate(accuracy),
      meanLive: aggregate(1000 * realised - 10),
      peakLive: aggregate(1000 * realised),
      realisedBudget: aggregate(realised),
      tokensPerSecond: aggregate(1),
    },
    elapsedMs: 1,
  } as CellResult;
}

const results = (cells: CellResult[]) => ({ cells }) as unknown as SweepResults;

describe('matched budgets', () => {
  const namm = results([
    cell('full', 1, 0.8, 1),
    cell('namm', 1, 0.8, 0.6),
    cell('namm', 0.5, 0.8, 0.5201),
    cell('namm', 0.25, 0.4, 0.26),
  ]);

  it('sweeps the full cache and NAMM, then the baselines at what NAMM realised, rounded up', () => {
    expect(nammSweep(settings, { name: 'retrieval', options: { a: 1 } })).toMatchObject({
      tasks: [{ name: 'retrieval', options: { a: 1 }, prefillChunk: 16 }],
      policies: ['full', { name: 'namm', dir: 'p' }],
      budgets: [1, 0.5, 0.25],
      seeds: [3],
      examplesPerCell: 4,
      checkpoints: { retrieval: 'm' },
    });
    expect(matchedBudget(namm, 0.5)).toBe(0.521);
    expect(matchedBudget(namm, 0.25)).toBe(0.26);
    expect(matchedBudgets(settings, namm)).toEqual([0.6, 0.521, 0.26]);
    expect(matchedSweep(settings, { name: 'retrieval', options: {} }, [0.6])).toMatchObject({
      policies: ['h2o', 'l2norm', 'snapkv'],
      budgets: [0.6],
    });
    expect(() => matchedBudget(namm, 0.1)).toThrowError(
      expect.objectContaining({ code: 'E_STATE', argument: 'results' }),
    );
  });

  it('joins the sweeps into rows of normalised scores and renders them', () => {
    const matched = results(
      [0.6, 0.521, 0.26].flatMap((b) => [
        cell('h2o', b, 0.2, b + 0.01),
        cell('l2norm', b, 0.1, b),
        cell('snapkv', b, 0.6, b + 0.002),
      ]),
    );
    const study = matchedStudy(settings, namm, matched);
    expect(study.full.mean).toBe(0.8);
    expect(study.rows.map((r) => r.matchedBudget)).toEqual([0.6, 0.521, 0.26]);
    expect(study.rows[2]!.namm.normalised).toBeCloseTo(0.5, 12);
    expect(study.rows[1]!.baselines.h2o.normalised).toBeCloseTo(0.25, 12);
    expect(study.rows[1]!.baselines.h2o.realised).toBeCloseTo(0.531, 12);
    expect(study.rows[0]!.namm.meanSize).toBeCloseTo(590 / 990, 12);
    const report = studyReport(study, [], 'npm run study');
    expect(report.markdown).toContain(
      '| 0.25 | 26.0 % | 25.3 % | 40.0 % ± 1.0 (0.500) | 1 | 0.26 | 20.0 % ± 1.0 (0.250) at 27.0 % | 10.0 % ± 1.0 (0.125) at 26.0 % | 60.0 % ± 1.0 (0.750) at 26.2 % |',
    );
    expect(report.markdown).toContain('| matched budget | H2O | L2 | SnapKV |');
    expect(study.rows[0]!.baselines.snapkv.normalised).toBeCloseTo(0.75, 12);
    expect(Object.keys(report.figures)).toEqual([
      'matched-budgets.svg',
      'layer-retained.svg',
      'layer-age.svg',
    ]);
    expect(() => matchedStudy(settings, namm, results([]))).toThrowError(
      expect.objectContaining({ code: 'E_STATE' }),
    );
  });
});

describe('layerProfiles', () => {
  it('reads every token at the full cache’s ages without eviction, and at most the capacity under NAMM', async () => {
    const { model, task } = await loadTaskModel(join(MODELS, 'retrieval'));
    const registry = createDefaultRegistry();
    const run = async (name: string, budgets: number[], dir?: string) =>
      layerProfiles({
        model,
        task: task as GenerationTask,
        policy: await registry.prepare(name, {
          ...(dir === undefined ? {} : { directory: await nodePolicyStore().open(dir) }),
        }),
        budgets,
        examples: 2,
        seed: 0,
        prefillChunk: 16,
      });
    const [full] = await run('full', [1]);
    for (const layer of full!.layers) {
      expect(layer.retained).toBe(1);
      expect(layer.age).toBeCloseTo(layer.fullAge, 9);
      // Prompts of about 280 tokens.
      expect(layer.fullAge).toBeGreaterThan(100);
    }
    const [small] = await run('namm', [0.1], join(MODELS, 'namm-retrieval'));
    for (const layer of small!.layers) {
      expect(layer.retained).toBeGreaterThan(0);
      // At most the capacity: 10 % of the peak, rounded up.
      expect(layer.retained).toBeLessThan(0.11);
    }
    model.dispose();
  });
});
