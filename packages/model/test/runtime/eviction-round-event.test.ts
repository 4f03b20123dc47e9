import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EvictionRoundEvent, generate } from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';
import { asKVCache } from '../support/cache-implementations';
import { RecentWindowPolicy } from './recent-window-policy';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const prompts = [Int32Array.of(1, 2, 3), Int32Array.of(4, 5, 6, 7, 8)];

describe('onEvictionRound', () => {
  it('reports every round per sequence and layer with the step and the applied decision', async () => {
    const model = lively(config, 3);
    const keepCount = 4;
    const slack = 1;
    const events: Omit<EvictionRoundEvent, 'observation'>[] = [];
    const result = await generate({
      model,
      prompts,
      maxNewTokens: 9,
      sampling: { temperature: 0 },
      eviction: new RecentWindowPolicy(keepCount, slack),
      onEvictionRound: ({ sequence, layer, step, observation, decision }) => {
        expect(observation.layer).toBe(layer);
        expect(observation.step).toBe(step);
        events.push({ sequence, layer, step, decision });
      },
    });
    // A round runs whenever a head holds more than keepCount + slack = 5 entries and leaves the
    // newest 4 plus the anchored sink (token 0): rounds at lengths 6, 7, 8, … up to the end.
    prompts.forEach((prompt, b) => {
      const cache = asKVCache(result.caches[b]);
      const length = cache.length(0);
      expect(length).toBe(prompt.length + result.tokens[b]!.length - 1);
      for (let layer = 0; layer < config.num_hidden_layers; layer++) {
        const mine = events.filter((e) => e.sequence === b && e.layer === layer);
        const expected: number[] = [];
        let live = prompt.length;
        for (let t = prompt.length; t <= length; t++) {
          live = t === prompt.length ? live : live + 1;
          if (live > keepCount + slack) {
            expected.push(t);
            live = keepCount + 1;
          }
        }
        expect(mine.map((e) => e.step)).toEqual(expected);
        // The decision is the one the cache applied: an entry dropped at step n was visible to
        // the query of token n − 1 and to none after it.
        const mask = cache.replayMask(layer);
        for (const { step, decision } of mine) {
          expect(decision.granularity).toBe('head');
          const kept = (decision as { readonly keep: readonly Int32Array[] }).keep[0]!;
          expect(kept).toHaveLength(keepCount);
          const dropped = step - keepCount - 1; // the oldest live entry after the sink
          if (step < length) {
            expect(mask[(step - 1) * length + dropped]).toBe(1);
            expect(mask[step * length + dropped]).toBe(0);
          }
        }
      }
    });
    model.dispose();
  });
});
