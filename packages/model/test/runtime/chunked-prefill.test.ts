import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { GenerationSession, generate } from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';
import { CACHE_IMPLEMENTATIONS } from '../support/cache-implementations';
import { RecentWindowPolicy } from './recent-window-policy';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const prompt = (n: number, offset: number) =>
  Int32Array.from({ length: n }, (_, i) => (7 * i + offset) % 23);
const prompts = [prompt(11, 1), prompt(4, 2), prompt(9, 5)];

/** Runs a test once per `KVCacheStore` implementation behind the session (`createCache`). */
const eachCache = it.each(CACHE_IMPLEMENTATIONS);

describe('chunked prefill', () => {
  it.each([1, 3, 4, 11, 50])(
    'with a full cache, chunks of %i give the logits and greedy tokens of one whole prefill',
    async (chunk) => {
      const model = lively(config, 3);
      const whole = await new GenerationSession({ model }).prefill(prompts);
      const chunked = await new GenerationSession({ model, prefillChunk: chunk }).prefill(prompts);
      chunked.logits.forEach((row, b) => {
        row.forEach((v, i) => expect(v).toBeCloseTo(whole.logits[b]![i]!, 4));
      });
      const run = (prefillChunk?: number) =>
        generate({ model, prompts, maxNewTokens: 8, sampling: { temperature: 0 }, prefillChunk });
      const [a, b] = [await run(), await run(chunk)];
      expect(b.tokens).toEqual(a.tokens);
      model.dispose();
    },
  );

  eachCache('%s: the peak during the prompt is ≤ keepCount + slack + chunk', async (_, create) => {
    const model = lively(config, 3);
    const keepCount = 5;
    const slack = 1;
    const chunk = 3;
    const run = (prefillChunk?: number) =>
      generate({
        model,
        prompts,
        maxNewTokens: 4,
        sampling: { temperature: 0 },
        eviction: new RecentWindowPolicy(keepCount, slack),
        prefillChunk,
        createCache: create,
      });
    const kvHeads = config.num_key_value_heads;
    const whole = await run();
    // Without chunks the whole prompt is in the cache before the first eviction check.
    expect(whole.stats.caches[0]!.peakPerLayer[0]).toBe(kvHeads * prompts[0]!.length);
    const chunked = await run(chunk);
    for (const stats of chunked.stats.caches) {
      for (const peak of stats.peakPerLayer) {
        expect(peak).toBeLessThanOrEqual(kvHeads * (keepCount + slack + chunk));
      }
    }
    model.dispose();
  });

  eachCache('%s: calls onPrefillChunk before each chunk with its sequences', async (_, create) => {
    const model = lively(config, 3);
    const seen: { sequences: number[]; start: number; lengths: number[]; fed: number[] }[] = [];
    await new GenerationSession({
      model,
      createCache: create,
      prefillChunk: 5,
      onPrefillChunk: ({ sequences, caches, start, lengths }) => {
        seen.push({
          sequences: [...sequences],
          start,
          lengths: caches.map((c) => c.length(0)),
          fed: [...lengths],
        });
      },
    }).prefill(prompts);
    // Prompts of 11, 4 and 9 tokens in chunks of 5.
    expect(seen).toEqual([
      { sequences: [0, 1, 2], start: 0, lengths: [0, 0, 0], fed: [5, 4, 5] },
      { sequences: [0, 2], start: 5, lengths: [5, 4, 5], fed: [5, 4] },
      { sequences: [0], start: 10, lengths: [10, 4, 9], fed: [1] },
    ]);
    model.dispose();
  });

  it('ends chunks at the multiples of both the session chunk and the policy chunk', async () => {
    const model = lively(config, 3);
    const starts = async (prefillChunk: number | undefined, policyChunk: number | undefined) => {
      const seen: number[] = [];
      const eviction = Object.assign(new RecentWindowPolicy(100, 0), { prefillChunk: policyChunk });
      await new GenerationSession({
        model,
        prefillChunk,
        eviction,
        onPrefillChunk: ({ start }) => seen.push(start),
      }).prefill(prompts);
      return seen;
    };
    // The longest prompt has 11 tokens.
    expect(await starts(undefined, 4)).toEqual([0, 4, 8]);
    expect(await starts(3, 4)).toEqual([0, 3, 4, 6, 8, 9]);
    expect(await starts(5, undefined)).toEqual([0, 5, 10]);
    expect(await starts(undefined, undefined)).toEqual([0]);
    model.dispose();
  });

  it('refuses a policy chunk that is not a positive integer, naming it', () => {
    const model = lively(config, 3);
    const eviction = Object.assign(new RecentWindowPolicy(4, 0), { prefillChunk: 0 });
    expect(() => new GenerationSession({ model, eviction })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'eviction.prefillChunk' }),
    );
    model.dispose();
  });

  it('rejects a chunk size that is not a positive integer, naming it', () => {
    const model = lively(config, 3);
    for (const bad of [0, -2, 1.5, Number.NaN]) {
      expect(() => new GenerationSession({ model, prefillChunk: bad })).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument: 'prefillChunk' }),
      );
    }
    model.dispose();
  });
});
