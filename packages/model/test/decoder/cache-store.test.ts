import {
  KVCache,
  type KVCacheOptions,
  type KVCacheStore,
  type LayerObservation,
  type ObservationNeeds,
} from '@lethe/kv-cache';
import { initBackend, Rng } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { entryCounts } from '../support/cache-implementations';
import { ForgetfulAnchorsCache } from '../support/forgetful-anchors-cache';
import { UnpagedCache } from '../support/unpaged-cache';
import { cacheOptionsFor, lively, randomTokens, takeLogits, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ model_type: 'qwen2' });

/** `cache` seen through a proxy whose `member` reads as `value` (the cache itself is untouched). */
function withMember(cache: KVCacheStore, member: string, value: unknown): KVCacheStore {
  return new Proxy(cache, {
    get: (target, key) => (key === member ? value : Reflect.get(target, key, target)),
  });
}

/** Everything a policy can ask for, within what `options` keeps. */
const ALL_NEEDS: ObservationNeeds = {
  attentionWindow: 3,
  accumulatedAttention: true,
  keys: true,
  values: true,
  hidden: false,
  pageKeyBounds: true,
};

describe('the model takes any KVCacheStore', () => {
  it('rejects an object missing a member, naming caches[b] and the member, before mutating', () => {
    const model = lively(config, 4);
    const options = cacheOptionsFor(config);
    const good = new KVCache(options);
    const members = [
      'length',
      'liveCounts',
      'append',
      'recordQueries',
      'view',
      'gather',
      'pageKeyBounds',
      'observe',
      'keep',
      'truncate',
      'stats',
      'geometry',
      'queryHeads',
      'queryWindow',
      'storeValues',
      'storeGates',
      'trackAttention',
      'anchors',
    ];
    const prompt = Int32Array.of(1, 2);
    for (const member of members) {
      const bad = withMember(new UnpagedCache(options), member, undefined);
      expect(() => model.prefill([good, bad], [prompt, prompt])).toThrowError(
        expect.objectContaining({
          code: 'E_ARG',
          argument: 'caches[1]',
          message: expect.stringContaining(`KVCacheStore: ${member}`),
        }),
      );
    }
    const { pageSize: _, ...noPageSize } = good.geometry;
    expect(() =>
      model.decodeStep([withMember(good, 'geometry', noPageSize)], Int32Array.of(1)),
    ).toThrowError(/E_ARG.*caches\[0\].*geometry\.pageSize/);
    expect(() => model.prefill([42 as unknown as KVCacheStore], [prompt])).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'caches[0]' }),
    );
    expect(good.length(0)).toBe(0);
    model.dispose();
  });

  it('gives bit-identical logits, views and observations with KVCache and the unpaged cache', () => {
    const model = lively(config, 21);
    const prompts = [randomTokens(1, 7, 37), randomTokens(2, 5, 37)];
    const options: KVCacheOptions = cacheOptionsFor(config, {
      queryWindow: 3,
      trackAttention: true,
      anchors: { sinks: 1, window: 1 },
    });
    // Three batches over the same prompts: paged, unpaged, and one of each kind.
    const batches: KVCacheStore[][] = [
      [new KVCache(options), new KVCache(options)],
      [new UnpagedCache(options), new UnpagedCache(options)],
      [new UnpagedCache(options), new KVCache(options)],
    ];
    const expectSame = (rows: Float32Array[][]) => {
      for (const other of rows.slice(1)) expect(other).toEqual(rows[0]);
    };
    // A chunked prefill: 4 tokens, then the rest.
    batches.forEach((caches) => {
      takeLogits(model.prefill(caches, [prompts[0]!.subarray(0, 4), prompts[1]!.subarray(0, 4)]));
    });
    expectSame(
      batches.map((caches) =>
        takeLogits(model.prefill(caches, [prompts[0]!.subarray(4), prompts[1]!.subarray(4)])),
      ),
    );
    const rng = new Rng(9);
    for (let step = 0; step < 8; step++) {
      const tokens = Int32Array.of((5 * step + 1) % 37, (3 * step + 2) % 37);
      // every other step a sparse κ read, from the bounds each cache keeps (or recomputes)
      const sparse = [{ tokenKeep: 0.4 }, { tokenKeep: 0.6 }];
      const controls = step % 2 === 0 ? undefined : [sparse, [...sparse].reverse()];
      expectSame(batches.map((caches) => takeLogits(model.decodeStep(caches, tokens, controls))));
      for (let b = 0; b < 2; b++) {
        const caches = batches.map((batch) => batch[b]!);
        for (let layer = 0; layer < config.num_hidden_layers; layer++) {
          const observations = caches.map((cache) => cache.observe(layer, ALL_NEEDS));
          for (const other of observations.slice(1)) expect(other).toEqual(observations[0]);
          if (step % 3 !== 2) continue;
          // Keep a random half of each head (the cache adds the anchors back).
          const keep = randomHalves(observations[0]!, rng);
          for (const cache of caches) cache.keep(layer, { granularity: 'head', keep });
          const views = caches.map((cache) => cache.view(layer));
          for (const other of views.slice(1)) expect(other).toEqual(views[0]);
        }
        const stats = caches.map((cache) => entryCounts(cache.stats()));
        for (const other of stats.slice(1)) expect(other).toEqual(stats[0]);
      }
    }
    expect(batches[0]![0]!.stats().evictionRounds).toEqual(Int32Array.of(2, 2));
    model.dispose();
  });

  it('keep protects the same anchors in both caches; a cache forgetting the sinks is caught', () => {
    const options = cacheOptionsFor(config, { anchors: { sinks: 2, window: 2 } });
    const { num_key_value_heads: kvHeads, head_dim: headDim } = config;
    const kept = (cache: KVCacheStore) => {
      const keys = new Rng(3).normal(8 * kvHeads * headDim);
      cache.append(
        0,
        keys,
        keys,
        Int32Array.from({ length: 8 }, (_, i) => i),
      );
      cache.keep(0, { granularity: 'head', keep: [Int32Array.of(4), Int32Array.of(3, 2)] });
      const view = cache.view(0);
      return Array.from({ length: kvHeads }, (_, h) =>
        Array.from(
          view.positions.subarray(h * view.maxLive, h * view.maxLive + view.liveCounts[h]!),
        ),
      );
    };
    const expected = [
      [0, 1, 4, 6, 7],
      [0, 1, 2, 3, 6, 7],
    ];
    expect(kept(new KVCache(options))).toEqual(expected);
    expect(kept(new UnpagedCache(options))).toEqual(expected);
    expect(kept(new ForgetfulAnchorsCache(options))).not.toEqual(expected);
  });
});

/** Per head, a random half of the live entries (sorted indices). */
function randomHalves(observation: LayerObservation, rng: Rng): Int32Array[] {
  return Array.from(observation.liveCounts, (live) => {
    const u = rng.uniform(live);
    const order = Array.from({ length: live }, (_, i) => i).sort((a, b) => u[a]! - u[b]!);
    return Int32Array.from(order.slice(0, Math.ceil(live / 2))).sort();
  });
}
