import {
  type EvictionPolicy,
  KVCache,
  type KVCacheOptions,
  type KVCacheStore,
} from '@lethe/kv-cache';
import { H2OPolicy, SnapKVPolicy, StreamingLLMPolicy, TOVAPolicy } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import {
  type CacheReads,
  type EvictionRoundEvent,
  GenerationSession,
  generate,
} from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';
import {
  type CacheFactory,
  entryCounts,
  pagedCache,
  unpagedCache,
} from '../support/cache-implementations';
import { ForgetfulAnchorsCache } from '../support/forgetful-anchors-cache';
import { UnpagedCache } from '../support/unpaged-cache';
import { LinearGate, policiesOf } from './batcher-fixtures';
import { RecentWindowPolicy } from './recent-window-policy';

const config = tinyConfig({ vocab_size: 23 });
let model: DecoderModel;

beforeAll(async () => {
  await initBackend('wasm');
  model = lively(config, 3);
});

afterAll(() => model.dispose());
const prompt = (n: number, offset: number) =>
  Int32Array.from({ length: n }, (_, i) => (5 * i + offset) % 23);
const prompts = [prompt(13, 1), prompt(7, 4)];

/** What a run produced, everything copied: tokens, log-probs, counts, rounds, final observations. */
async function run(createCache: CacheFactory, eviction: EvictionPolicy) {
  const rounds: EvictionRoundEvent[] = [];
  const result = await generate({
    model,
    prompts,
    maxNewTokens: 24,
    eviction,
    sampling: { temperature: 0.9 },
    seed: 5,
    prefillChunk: 4,
    createCache,
    onEvictionRound: (event) => rounds.push(structuredClone(event)),
  });
  const needs = { ...eviction.needs, keys: true, values: true };
  return {
    tokens: result.tokens,
    logProbs: result.logProbs,
    counts: result.stats.caches.map(entryCounts),
    rounds,
    final: result.caches.map((cache) =>
      Array.from({ length: config.num_hidden_layers }, (_, layer) => cache.observe(layer, needs)),
    ),
  };
}

const POLICIES: [string, () => EvictionPolicy][] = [
  ['StreamingLLM', () => new StreamingLLMPolicy({ budget: { keepCount: 8 } })],
  ['H2O', () => new H2OPolicy({ budget: { keepCount: 8 }, anchors: { sinks: 1, window: 2 } })],
  ['SnapKV', () => new SnapKVPolicy({ budget: { keepCount: 8 }, windowSize: 3 })],
  ['TOVA', () => new TOVAPolicy({ budget: { keepCount: 8 }, granularity: 'layer' })],
];

describe('generate() behind the KVCacheStore contract', () => {
  it.each(POLICIES)(
    '%s: KVCache and the unpaged cache give the same tokens, stats, rounds and observations',
    async (_, policy) => {
      const paged = await run(pagedCache, policy());
      const unpaged = await run(unpagedCache, policy());
      expect(paged.rounds.length).toBeGreaterThan(0);
      expect(unpaged.tokens).toEqual(paged.tokens);
      expect(unpaged.logProbs).toEqual(paged.logProbs);
      expect(unpaged.counts).toEqual(paged.counts);
      expect(unpaged.rounds).toEqual(paged.rounds);
      expect(unpaged.final).toEqual(paged.final);
    },
  );

  it('catches a cache that gets the anchors wrong', async () => {
    // The test policy's decisions leave out its sink; the cache must add it back.
    const policy = () => new RecentWindowPolicy(6, 2);
    const paged = await run(pagedCache, policy());
    const unpaged = await run(unpagedCache, policy());
    const forgetful = await run((options) => new ForgetfulAnchorsCache(options), policy());
    expect(unpaged.counts).toEqual(paged.counts);
    expect(unpaged.final).toEqual(paged.final);
    expect(forgetful.counts).not.toEqual(paged.counts);
    expect(forgetful.final).not.toEqual(paged.final);
  });
});

describe('SessionOptions.createCache', () => {
  it('makes each sequence cache from the options the session derives', async () => {
    const made: KVCacheOptions[] = [];
    const eviction = new H2OPolicy({ budget: { keepCount: 8 }, anchors: { sinks: 1, window: 2 } });
    const session = new GenerationSession({
      model,
      eviction,
      pageSize: 8,
      createCache: (options) => {
        made.push(options);
        return new UnpagedCache(options);
      },
    });
    await session.prefill(prompts);
    await session.step([1], Int32Array.of(3));
    expect(session.caches).toHaveLength(2);
    for (const cache of session.caches) expect(cache).toBeInstanceOf(UnpagedCache);
    expect(session.caches[1]!.length(0)).toBe(prompts[1]!.length + 1);
    expect(made).toHaveLength(2);
    expect(made[0]).toMatchObject({
      geometry: {
        layers: config.num_hidden_layers,
        kvHeads: config.num_key_value_heads,
        headDim: config.head_dim,
        pageSize: 8,
      },
      queryHeads: config.num_attention_heads,
      anchors: eviction.anchors,
      queryWindow: 0,
      trackAttention: true,
    });
  });

  it('says which runs read keys on the host and which rank pages where the keys are', async () => {
    const gate = new LinearGate(config, 3);
    const kinds = {
      full: policiesOf('full', config, gate, 16),
      h2o: policiesOf('h2o', config, gate, 16),
      'streaming-llm': policiesOf('streaming-llm', config, gate, 16),
      quest: policiesOf('quest', config, gate, 16),
      compute: policiesOf('compute', config, gate, 16),
      gate: policiesOf('gate', config, gate, 16),
      'gate + quest': {
        ...policiesOf('gate', config, gate, 16),
        ...policiesOf('quest', config, gate),
      },
      'quest + compute': {
        ...policiesOf('quest', config, gate),
        ...policiesOf('compute', config, gate),
      },
    };
    const asked: Record<string, CacheReads[]> = {};
    for (const [kind, policies] of Object.entries(kinds)) {
      const reads: CacheReads[] = [];
      const session = new GenerationSession({
        model,
        ...policies,
        pageSize: 4,
        createCache: (options, cacheReads) => {
          reads.push(cacheReads);
          return new KVCache(options);
        },
      });
      await session.prefill(prompts);
      session.dispose();
      asked[kind] = reads;
    }
    gate.dispose();
    const none = { hostKeys: false, pageBounds: false };
    // Quest and SOL's κ rank pages by their key bounds: where the keys are (beside a gate hook
    // too), unless only the host can take the read (a selector's and κ's reads intersect there)
    const ranked = { hostKeys: false, pageBounds: true };
    const host = { hostKeys: true, pageBounds: false };
    expect(asked).toEqual({
      full: [none, none],
      h2o: [none, none],
      'streaming-llm': [none, none],
      quest: [ranked, ranked],
      compute: [ranked, ranked],
      gate: [none, none],
      'gate + quest': [ranked, ranked],
      'quest + compute': [host, host],
    });
  });

  it('defaults to KVCache', async () => {
    const session = new GenerationSession({ model });
    await session.prefill(prompts);
    for (const cache of session.caches) expect(cache).toBeInstanceOf(KVCache);
  });

  it('rejects a non-function, and a cache that breaks the contract, naming them', async () => {
    expect(
      () =>
        new GenerationSession({
          model,
          createCache: 'unpaged' as unknown as CacheFactory,
        }),
    ).toThrowError(expect.objectContaining({ code: 'E_ARG', argument: 'createCache' }));
    const broken = new GenerationSession({
      model,
      createCache: () => ({ geometry: { layers: 2 } }) as unknown as KVCacheStore,
    });
    await expect(broken.prefill(prompts)).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'caches[0]',
    });
  });
});
