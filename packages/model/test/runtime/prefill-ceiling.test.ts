// A ceiling (PolicySet.ceiling) bounds a sequence's peak during its prompt: every prefill chunk
// ends where it would take a KV head past it, whatever the prefill chunk, in generate() and in the
// continuous batcher alike; without one, a chunk passes the policy's budget by its length.
import { StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import { ContinuousBatcher, GenerationSession, generate } from '../../src/runtime/index';
import { lively, randomTokens, tinyConfig } from '../decoder/helpers';
import { RecentWindowPolicy } from './recent-window-policy';

const config = tinyConfig({ vocab_size: 31, max_position_embeddings: 160 });
let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = lively(config, 9);
});

/**
 * A policy that holds a head to `ceiling`: once a head holds `ceiling − 1`, a round keeps the sink
 * and the newest `ceiling − 2` entries, so the next token brings it back to the ceiling.
 */
const windowUnder = (ceiling: number) => new RecentWindowPolicy(ceiling - 2, 0);

/** Most live entries any KV head of any layer held, from the per-layer peaks (heads summed). */
const peakPerHead = (peaks: Int32Array) => Math.max(...peaks) / config.num_key_value_heads;

describe('a ceiling bounds the peak during the prompt', () => {
  it('generate(): peak ≤ ceiling at every prompt length and chunk; without it, the chunk passes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 3, max: 24 }),
        fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }),
        async (length, ceiling, prefillChunk) => {
          const prompt = randomTokens(length, length, config.vocab_size);
          const run = (bounded: boolean) =>
            generate({
              model,
              prompts: [prompt],
              maxNewTokens: 3,
              sampling: { temperature: 0 },
              eviction: windowUnder(ceiling),
              ...(bounded ? { ceiling } : {}),
              prefillChunk,
            });
          const bounded = await run(true);
          expect(peakPerHead(bounded.stats.caches[0]!.peakPerLayer)).toBeLessThanOrEqual(ceiling);
          const unbounded = await run(false);
          const firstChunk = Math.min(length, prefillChunk ?? length);
          expect(peakPerHead(unbounded.stats.caches[0]!.peakPerLayer)).toBeGreaterThanOrEqual(
            firstChunk,
          );
        },
      ),
      { numRuns: 25, seed: 3 },
    );
  });

  it('the first chunk fills up to the ceiling, then one token per round', async () => {
    const starts: number[] = [];
    await new GenerationSession({
      model,
      eviction: windowUnder(6),
      ceiling: 6,
      prefillChunk: 4,
      onPrefillChunk: ({ start }) => starts.push(start),
    }).prefill([randomTokens(1, 10, config.vocab_size)]);
    // chunks of 4 end at 4, then room 2 (ceiling 6 − 4 live) ends at 6, then one token each
    expect(starts).toEqual([0, 4, 6, 7, 8, 9]);
  });

  it('a policy that leaves room for the next chunk keeps the chunks, under the ceiling', async () => {
    const ceiling = 24;
    const lengths: number[] = [];
    // StreamingLLM's rounds keep keepCount − (incoming − 1) under a keep count (roomyKeep)
    const eviction = new StreamingLLMPolicy({
      budget: { keepCount: ceiling - 1 },
      anchors: { sinks: 2, window: 0 },
    });
    const result = await generate({
      model,
      prompts: [randomTokens(8, 100, config.vocab_size)],
      maxNewTokens: 4,
      sampling: { temperature: 0 },
      eviction,
      ceiling,
      prefillChunk: 5,
      onPrefillChunk: ({ lengths: fed }) => lengths.push(fed[0]!),
    });
    expect(peakPerHead(result.stats.caches[0]!.peakPerLayer)).toBeLessThanOrEqual(ceiling);
    // 100 tokens in chunks of 5 (a quarter of the ceiling is 6), none of one token
    expect(lengths).toEqual(Array.from({ length: 20 }, () => 5));
    // the batcher feeds the same chunks with the same rounds: the same tokens
    const batcher = new ContinuousBatcher({ model, prefillChunk: 5 });
    const batched = await batcher.submit({
      prompt: randomTokens(8, 100, config.vocab_size),
      maxNewTokens: 4,
      sampling: { temperature: 0 },
      policies: { eviction, ceiling },
    });
    expect(Array.from(batched.tokens)).toEqual(Array.from(result.tokens[0]!));
    expect(peakPerHead(batched.cache.peakPerLayer)).toBeLessThanOrEqual(ceiling);
    await batcher.close();
  });

  it('the batcher: a request with a ceiling peaks under it and generates what generate() does', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: 32 });
    const prompt = randomTokens(4, 70, config.vocab_size);
    const policies = { eviction: windowUnder(10), ceiling: 10 };
    const result = await batcher.submit({
      prompt,
      maxNewTokens: 6,
      sampling: { temperature: 0 },
      policies,
    });
    expect(peakPerHead(result.cache.peakPerLayer)).toBeLessThanOrEqual(10);
    const alone = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: 6,
      sampling: { temperature: 0 },
      ...policies,
      prefillChunk: 32,
    });
    expect(Array.from(result.tokens)).toEqual(Array.from(alone.tokens[0]!));
    await batcher.close();
  });

  it('refuses a ceiling below 2 or without an eviction policy, naming it', () => {
    for (const ceiling of [1, 2.5]) {
      expect(
        () => new GenerationSession({ model, eviction: new RecentWindowPolicy(3, 0), ceiling }),
      ).toThrowError(expect.objectContaining({ code: 'E_ARG', argument: 'ceiling' }));
    }
    expect(() => new GenerationSession({ model, ceiling: 8 })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'ceiling' }),
    );
  });
});
