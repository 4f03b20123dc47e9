import type { KeepDecision, KVCacheStore, LayerControls } from '@lethe/kv-cache';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { CACHE_IMPLEMENTATIONS } from '../support/cache-implementations';
import {
  forwardRows,
  lively,
  maxAbsDiff,
  randomTokens,
  storeFor,
  takeLogits,
  tinyConfig,
  VARIANTS,
} from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

/** Runs a test once per `KVCacheStore` implementation (`%s` is its name). */
const eachCache = it.each(CACHE_IMPLEMENTATIONS);

describe('cached decode equals the parallel forward', () => {
  for (const { name, config } of VARIANTS) {
    eachCache(`${name}, %s: prefill + decode logits = forward logits everywhere`, (_, create) => {
      const model = lively(config, 11);
      const tokens = randomTokens(5, 12, config.vocab_size);
      const reference = forwardRows(model, tokens);
      // Prefill lengths 1..4 on fresh caches: last-token logits match row length-1.
      for (let length = 1; length <= 4; length++) {
        const fresh = storeFor(create, config);
        const [row] = takeLogits(model.prefill([fresh], [tokens.slice(0, length)]));
        expect(maxAbsDiff(row!, reference[length - 1]!)).toBeLessThan(1e-4);
      }
      const cache = storeFor(create, config);
      const [first] = takeLogits(model.prefill([cache], [tokens.slice(0, 3)]));
      expect(maxAbsDiff(first!, reference[2]!)).toBeLessThan(1e-4);
      for (let t = 3; t < tokens.length; t++) {
        const [row] = takeLogits(model.decodeStep([cache], Int32Array.of(tokens[t]!)));
        expect(maxAbsDiff(row!, reference[t]!)).toBeLessThan(1e-4);
      }
      expect(cache.length(0)).toBe(tokens.length);
      expect(cache.length(1)).toBe(tokens.length);
      model.dispose();
    });
  }

  eachCache('%s: chunked prefill on a non-empty cache continues the sequence', (_, create) => {
    const config = tinyConfig({ model_type: 'qwen2' });
    const model = lively(config, 3);
    const tokens = randomTokens(9, 10, config.vocab_size);
    const reference = forwardRows(model, tokens);
    const cache = storeFor(create, config);
    takeLogits(model.prefill([cache], [tokens.slice(0, 4)]));
    const [row] = takeLogits(model.prefill([cache], [tokens.slice(4, 10)]));
    expect(maxAbsDiff(row!, reference[9]!)).toBeLessThan(1e-4);
    model.dispose();
  });
});

/** Per-sequence evictions used by the batch test: different layers, heads and slots. */
const EVICTIONS: readonly ((cache: KVCacheStore) => void)[] = [
  (cache) => cache.keep(0, { granularity: 'layer', keep: Int32Array.of(0, 2) }),
  (cache) => {
    const decision: KeepDecision = {
      granularity: 'head',
      keep: [Int32Array.of(1, 3, 4), Int32Array.of(0, 4)],
    };
    cache.keep(1, decision);
    cache.keep(0, { granularity: 'layer', keep: Int32Array.of(4) });
  },
  () => {},
];

/** Per-sequence controls used by the batch test (layer 0 only, then layer 1 only, none). */
function controlsFor(b: number, cache: KVCacheStore): (LayerControls | undefined)[] | undefined {
  if (b === 0) return [{ mlpKeep: 0.5 }, undefined];
  if (b === 1) {
    const view = cache.view(1);
    const bias = new Float32Array(view.kvHeads * view.maxLive).map((_, i) => Math.sin(i) * 0.7);
    const lastPage = Math.ceil(view.liveCounts[1]! / cache.geometry.pageSize) - 1;
    const readPages = [Int32Array.of(0), Int32Array.of(lastPage)];
    return [{ activationBits: 4 }, { attentionBias: bias, readPages }];
  }
  return undefined;
}

describe('batched prefill/decode equals one-at-a-time', () => {
  eachCache('%s: ragged prompts, different evictions and controls per sequence', (_, create) => {
    const config = tinyConfig({ model_type: 'qwen2' });
    const model = lively(config, 21);
    const prompts = [randomTokens(1, 5, 37), randomTokens(2, 7, 37), randomTokens(3, 3, 37)];
    const batched = prompts.map(() => storeFor(create, config));
    const single = prompts.map(() => storeFor(create, config));
    const batchPrefill = takeLogits(model.prefill(batched, prompts));
    prompts.forEach((prompt, b) => {
      const [row] = takeLogits(model.prefill([single[b]!], [prompt]));
      expect(maxAbsDiff(row!, batchPrefill[b]!)).toBeLessThan(1e-5);
    });
    EVICTIONS.forEach((evict, b) => {
      evict(batched[b]!);
      evict(single[b]!);
    });
    for (let step = 0; step < 4; step++) {
      const tokens = Int32Array.from(prompts, (_, b) => (7 * step + 5 * b + 1) % 37);
      const controls = batched.map((cache, b) => controlsFor(b, cache));
      const batchRows = takeLogits(model.decodeStep(batched, tokens, controls));
      single.forEach((cache, b) => {
        const own = controlsFor(b, cache);
        const [row] = takeLogits(model.decodeStep([cache], Int32Array.of(tokens[b]!), [own]));
        expect(maxAbsDiff(row!, batchRows[b]!)).toBeLessThan(1e-5);
      });
    }
    batched.forEach((cache, b) => {
      expect(cache.liveCounts(1)).toEqual(single[b]!.liveCounts(1));
      expect(maxAbsDiff(cache.view(1).keys, single[b]!.view(1).keys)).toBeLessThan(1e-5);
    });
    model.dispose();
  });
});
