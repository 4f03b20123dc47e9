import {
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type ReadSelector,
} from '@lethe/kv-cache';
import { QuestSelector, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { GenerationSession, generate } from '../../src/runtime/index';
import { cacheFor, lively, maxAbsDiff, takeLogits, tinyConfig } from '../decoder/helpers';
import { CACHE_IMPLEMENTATIONS } from '../support/cache-implementations';

beforeAll(async () => {
  await initBackend('wasm');
});

// Four layers, so that Quest's two dense layers leave two sparse ones.
const config = tinyConfig({ vocab_size: 23, num_hidden_layers: 4 });
const model = () => lively(config, 8);
const prompt = (n: number, offset = 0) =>
  Int32Array.from({ length: n }, (_, i) => (5 * i + offset) % 23);
const argmax = (row: Float32Array) => row.reduce((best, v, i) => (v > row[best]! ? i : best), 0);

/** Runs a test once per `KVCacheStore` implementation behind the session (`createCache`). */
const eachCache = it.each(CACHE_IMPLEMENTATIONS);

/** Counts calls and forwards to an inner selector, optionally asking for more `needs`. */
class CountingSelector implements ReadSelector {
  readonly name = 'counting';
  calls = 0;
  windows: number[] = [];

  constructor(
    private readonly inner: ReadSelector,
    readonly needs: ObservationNeeds = inner.needs,
  ) {}

  get pageSize(): number {
    return this.inner.pageSize;
  }

  selectPages(observation: LayerObservation, query: Float32Array) {
    this.calls++;
    this.windows.push(observation.window);
    return this.inner.selectPages(observation, query);
  }
}

/** Reads every page of every head explicitly (never `undefined`). */
const allPages: ReadSelector = {
  name: 'all-pages',
  needs: NO_NEEDS,
  pageSize: 4,
  selectPages: (observation) =>
    Array.from(observation.liveCounts, (live) =>
      Int32Array.from({ length: Math.ceil(live / 4) }, (_, p) => p),
    ),
};

describe('generate with a read selector', () => {
  it('Quest with a budget covering every page generates what the full cache does', async () => {
    const m = model();
    const options = {
      model: m,
      prompts: [prompt(7), prompt(12, 3)],
      maxNewTokens: 40,
      sampling: { temperature: 0 },
    };
    const full = await generate(options);
    const quest = new CountingSelector(new QuestSelector({ tokenBudget: 64, pageSize: 4 }));
    const withQuest = await generate({ ...options, readSelector: quest });
    const explicit = await generate({ ...options, readSelector: allPages });
    for (let b = 0; b < 2; b++) {
      expect(Array.from(withQuest.tokens[b]!)).toEqual(Array.from(full.tokens[b]!));
      expect(Array.from(explicit.tokens[b]!)).toEqual(Array.from(full.tokens[b]!));
      expect(maxAbsDiff(explicit.logProbs[b]!, full.logProbs[b]!)).toBeLessThan(1e-5);
    }
    // asked in every layer of every decode step, per sequence; prefill is not asked
    expect(quest.calls).toBe(2 * 39 * config.num_hidden_layers);
    // read-time sparsity evicts nothing
    expect(Array.from(withQuest.stats.caches[0]!.livePerLayer)).toEqual(
      Array.from(full.stats.caches[0]!.livePerLayer),
    );
    m.dispose();
  });

  it('passes the selector to every decode step: greedy tokens equal a decodeStep loop with it', async () => {
    const m = model();
    const p = prompt(10);
    const quest = new QuestSelector({ tokenBudget: 8, pageSize: 4 });
    const result = await generate({
      model: m,
      prompts: [p],
      maxNewTokens: 30,
      sampling: { temperature: 0 },
      readSelector: quest,
    });
    const cache = cacheFor(config, { pageSize: 4 });
    const dense = cacheFor(config, { pageSize: 4 });
    let [row] = takeLogits(m.prefill([cache], [p]));
    takeLogits(m.prefill([dense], [p]));
    const manual: number[] = [];
    let moved = 0;
    for (let i = 0; i < 30; i++) {
      manual.push(argmax(row!));
      if (i < 29) {
        const token = Int32Array.of(manual[i]!);
        [row] = takeLogits(m.decodeStep([cache], token, undefined, { readSelector: quest }));
        const [denseRow] = takeLogits(m.decodeStep([dense], token));
        moved = Math.max(moved, maxAbsDiff(row!, denseRow!));
      }
    }
    expect(Array.from(result.tokens[0]!)).toEqual(manual);
    expect(moved).toBeGreaterThan(1e-3); // the budget really restricts the reads
    m.dispose();
  });

  it('tells onStep what the decode steps read so far: a dense step every live entry, Quest fewer', async () => {
    const m = model();
    const run = async (readSelector?: ReadSelector) => {
      const perStep: number[] = [];
      const live: number[] = [];
      let counted = 0;
      const result = await generate({
        model: m,
        prompts: [prompt(10)],
        maxNewTokens: 24,
        sampling: { temperature: 0 },
        readSelector,
        onStep: ({ caches, reads }) => {
          if (live.length > 0) perStep.push(reads[0]!.entries - counted);
          counted = reads[0]!.entries;
          let total = 0;
          for (let layer = 0; layer < config.num_hidden_layers; layer++) {
            for (const n of caches[0]!.liveCounts(layer)) total += n;
          }
          live.push(total);
        },
      });
      perStep.push(result.stats.reads[0]!.entries - counted);
      return { perStep, live, reads: result.stats.reads[0]! };
    };
    const dense = await run();
    expect(dense.perStep).toHaveLength(23);
    expect(dense.perStep).toEqual(dense.live);
    const quest = await run(new QuestSelector({ tokenBudget: 8, pageSize: 4 }));
    expect(quest.live).toEqual(dense.live); // it evicts nothing
    expect(quest.perStep.reduce((a, b) => a + b, 0)).toBe(quest.reads.entries);
    quest.perStep.forEach((read, k) => {
      expect(read).toBeLessThanOrEqual(quest.live[k]!);
    });
    expect(quest.perStep.at(-1)).toBeLessThan(quest.live.at(-1)!);
    m.dispose();
  });

  it("takes the selector's page size, merges its needs into the caches, and rejects a mismatch", async () => {
    const m = model();
    const quest = new QuestSelector({ tokenBudget: 8, pageSize: 4 });
    const counting = new CountingSelector(quest, { ...quest.needs, attentionWindow: 2 });
    const session = new GenerationSession({ model: m, readSelector: counting });
    await session.prefill([prompt(6)]);
    expect(session.caches[0]!.geometry.pageSize).toBe(4);
    expect(session.caches[0]!.queryWindow).toBe(2);
    await session.step([0], Int32Array.of(1));
    await session.step([0], Int32Array.of(2));
    expect(counting.windows).toEqual([...Array(4).fill(2), ...Array(4).fill(2)]);
    expect(() => new GenerationSession({ model: m, readSelector: quest, pageSize: 16 })).toThrow(
      expect.objectContaining({ code: 'E_ARG', argument: 'readSelector.pageSize' }),
    );
    expect(
      () =>
        new GenerationSession({
          model: m,
          readSelector: { ...allPages, needs: { ...NO_NEEDS, hidden: true } },
        }),
    ).toThrow(expect.objectContaining({ code: 'E_ARG', argument: 'readSelector.needs.hidden' }));
    m.dispose();
  });

  eachCache('%s: tensor count flat over 200 steps with Quest and eviction', async (_, create) => {
    const m = model();
    const session = new GenerationSession({
      model: m,
      createCache: create,
      readSelector: new QuestSelector({ tokenBudget: 12, pageSize: 4, denseLayers: 1 }),
      eviction: new StreamingLLMPolicy({ budget: { keepCount: 40 } }),
    });
    await session.prefill([prompt(9), prompt(5, 2)]);
    await session.step([0, 1], Int32Array.of(1, 2));
    const before = tf.memory().numTensors;
    for (let s = 0; s < 200; s++) {
      await session.step([0, 1], Int32Array.of((3 * s) % 23, (7 * s + 1) % 23));
    }
    expect(tf.memory().numTensors).toBe(before);
    expect(Math.max(...session.caches[0]!.liveCounts(3))).toBeLessThanOrEqual(41);
    m.dispose();
  });
});
