import {
  maxQueryWindow,
  type PolicyDirectory,
  type PolicyManifest,
  PolicyRegistry,
} from '@lethe/kv-cache';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { NgcPolicy, ngcProvider } from '../src/index';
import { ngcKeptBlocks } from '../src/ngc-policy';

const CONTEXT = {
  model: { layers: 2, kvHeads: 2, queryHeads: 4, headDim: 8, hiddenSize: 32 },
  sequences: 1,
};

function directory(manifest: Partial<PolicyManifest>): PolicyDirectory {
  return {
    files: {
      location: 'mem',
      readText: async () => '',
      readBytes: async () => new Uint8Array(),
    },
    manifest: {
      format: 'lethe-policy',
      version: 1,
      provider: 'ngc',
      options: {},
      ...manifest,
    } as PolicyManifest,
  };
}

describe('ngcProvider', () => {
  const registry = new PolicyRegistry([ngcProvider]);

  it('builds a capacity-scheduled NgcPolicy with the trained options under the user’s', async () => {
    const prepared = await registry.prepare('ngc', {
      options: { mode: 'greedy' },
      directory: directory({
        model: '.',
        options: { blockSize: 2, window: 2, logits: { kind: 'log', temperature: 0.5 } },
      }),
    });
    expect(prepared.model).toBe('.');
    const policy = prepared.build({ capacity: 9 }, CONTEXT).eviction as NgcPolicy;
    expect(policy).toBeInstanceOf(NgcPolicy);
    // The budget is a ceiling: rounds leave 8 entries, so the next token makes 9.
    expect(policy.schedule).toEqual({ keepCount: 8, slack: 0 });
    expect([policy.blockSize, policy.window, policy.logits]).toEqual([
      2,
      2,
      { kind: 'log', temperature: 0.5 },
    ]);
  });

  it('runs the paper’s rate schedule under a rate budget, as ε = 1 − keepRatio', async () => {
    const prepared = await registry.prepare('ngc', { directory: directory({ model: '.' }) });
    const policy = prepared.build({ keepRatio: 0.7, every: 16 }, CONTEXT).eviction as NgcPolicy;
    const schedule = policy.schedule as { evictionRate: number; cadence: number };
    expect(schedule.cadence).toBe(16);
    expect(schedule.evictionRate).toBeCloseTo(0.3, 12);
    // 1 − 0.7 is not 0.3 in binary floating point; the kept counts are the same anyway.
    const pairs = [
      [0.9, 0.1],
      [0.8, 0.2],
      [0.7, 0.3],
      [0.6, 0.4],
      [0.5, 0.5],
      [0.75, 0.25],
    ];
    for (const [keep, rate] of pairs as [number, number][]) {
      for (let blocks = 1; blocks <= 4096; blocks++) {
        expect(ngcKeptBlocks(1 - keep, blocks)).toBe(ngcKeptBlocks(rate, blocks));
      }
    }
    expectLetheError(
      () => prepared.build({ keepRatio: 1, every: 16 }, CONTEXT),
      'E_BUDGET',
      'budget.keepRatio',
    );
    const slack = await registry.prepare('ngc', {
      options: { slackFraction: 0.5 },
      directory: directory({ model: '.' }),
    });
    expectLetheError(
      () => slack.build({ keepRatio: 0.5, every: 16 }, CONTEXT),
      'E_BUDGET',
      'options.slackFraction',
    );
  });

  it('conditions the prompt on the rate for a model trained with interoception (§5.3)', async () => {
    const prepare = (interoception: string) =>
      registry.prepare('ngc', { options: { interoception }, directory: directory({ model: '.' }) });
    const rate = { keepRatio: 0.7, every: 16 };
    const spelt = (await prepare('characters')).build(rate, CONTEXT);
    expect(spelt.prompt!.text('p')).toBe('p<eviction_rate>30%</eviction_rate>');
    const markup = (await prepare('markup')).build(rate, CONTEXT);
    expect(markup.prompt!.text('p')).toBe('p⟨30%⟩');
    expect((await prepare('off')).build(rate, CONTEXT).prompt).toBeUndefined();
    const tagged = await prepare('characters');
    expectLetheError(
      () => tagged.build({ capacity: 9 }, CONTEXT),
      'E_BUDGET',
      'options.interoception',
    );
  });

  it('is learned: refuses to run without a directory, or with one that names no model', async () => {
    await expectLetheRejection(registry.prepare('ngc'), 'E_ARG', 'policyDir');
    await expectLetheRejection(
      registry.prepare('ngc', { directory: directory({}) }),
      'E_FORMAT',
      'mem/policy.json',
    );
  });

  it('validates its options and refuses a capacity below one block', async () => {
    await expectLetheRejection(
      registry.prepare('ngc', {
        options: { logits: { kind: 'log', temperature: 0 } },
        directory: directory({ model: '.' }),
      }),
      'E_ARG',
      'options.logits.temperature',
    );
    const prepared = await registry.prepare('ngc', { directory: directory({ model: '.' }) });
    const error = expectLetheError(
      () => prepared.build({ capacity: 32 }, CONTEXT),
      'E_BUDGET',
      'budget.capacity',
    );
    expect(error.message).toContain('leaves 31 entries after a round');
    expect(prepared.build({ capacity: 33 }, CONTEXT).eviction).toBeInstanceOf(NgcPolicy);
  });

  it('refuses a scoring window past what the cache holds, naming options.window', async () => {
    const prepare = (window: number) =>
      registry.prepare('ngc', { options: { window }, directory: directory({ model: '.' }) });
    // No cache holds 1e9 queries, whatever the model: the schema refuses it.
    await expectLetheRejection(prepare(1e9), 'E_ARG', 'options.window');
    // 4 query heads × 8 floats: the cache holds maxQueryWindow(4, 8) = 2^19 queries.
    const most = maxQueryWindow(4, 8);
    expect((await prepare(most)).build({ capacity: 64 }, CONTEXT).eviction).toBeInstanceOf(
      NgcPolicy,
    );
    for (const window of [most + 1, 1e7]) {
      const prepared = await prepare(window);
      expectLetheError(() => prepared.build({ capacity: 64 }, CONTEXT), 'E_ARG', 'options.window');
    }
  });
});
