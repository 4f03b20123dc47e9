import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cacheFor,
  forwardRows,
  lively,
  maxAbsDiff,
  randomTokens,
  takeLogits,
  tinyConfig,
} from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const T = 9;
const PROMPT = 5;

/** Evictions `[layer, head, position, cache length when evicted]`, written out by hand. */
const EVICTED: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 1, 5],
  [0, 1, 1, 5],
  [0, 0, 3, 5],
  [0, 1, 3, 5],
  [1, 0, 2, 5],
  [1, 1, 0, 5],
  [1, 0, 0, 7],
];

/** Visibility `[Hkv, T, T]` of one layer: causal, minus keys evicted before the query's step. */
function handMask(layer: number, kvHeads: number): Float32Array {
  const mask = new Float32Array(kvHeads * T * T);
  for (let h = 0; h < kvHeads; h++) {
    for (let t = 0; t < T; t++) {
      for (let j = 0; j <= t; j++) {
        const gone = EVICTED.some(
          ([l, hh, p, at]) => l === layer && hh === h && p === j && t >= at,
        );
        mask[(h * T + t) * T + j] = gone ? 0 : 1;
      }
    }
  }
  return mask;
}

describe('masking equals evicting', () => {
  it('a 2D replay mask gives the logits of decoding after physical evictions', () => {
    const config = tinyConfig({ model_type: 'qwen2' });
    const model = lively(config, 17);
    const tokens = randomTokens(4, T, config.vocab_size);
    const cache = cacheFor(config);
    const decoded: Float32Array[] = [];
    decoded[PROMPT - 1] = takeLogits(model.prefill([cache], [tokens.slice(0, PROMPT)]))[0]!;
    cache.keep(0, { granularity: 'layer', keep: Int32Array.of(0, 2, 4) });
    cache.keep(1, {
      granularity: 'head',
      keep: [Int32Array.of(0, 1, 3, 4), Int32Array.of(1, 2, 3, 4)],
    });
    for (let t = PROMPT; t < T; t++) {
      if (t === 7)
        cache.keep(1, {
          granularity: 'head',
          keep: [Int32Array.of(1, 2, 3, 4, 5), Int32Array.of(0, 1, 2, 3, 4, 5)],
        });
      decoded[t] = takeLogits(model.decodeStep([cache], Int32Array.of(tokens[t]!)))[0]!;
    }
    const kvHeads = config.num_key_value_heads;
    const hand = [0, 1].map((l) => handMask(l, kvHeads));
    // The cache's own replay masks agree with the hand-written visibility.
    hand.forEach((mask, l) => {
      for (let h = 0; h < kvHeads; h++) {
        expect(Array.from(cache.replayMask(l, h))).toEqual(
          Array.from(mask.subarray(h * T * T, (h + 1) * T * T)),
        );
      }
    });
    const masks = hand.map((mask) => tf.tensor4d(mask, [1, kvHeads, T, T]));
    const replayed = forwardRows(model, tokens, { masks });
    const unmasked = forwardRows(model, tokens);
    for (let t = PROMPT - 1; t < T; t++) {
      expect(maxAbsDiff(replayed[t]!, decoded[t]!)).toBeLessThan(1e-4);
    }
    // the evictions matter: without the masks the late positions differ
    expect(maxAbsDiff(unmasked[T - 1]!, decoded[T - 1]!)).toBeGreaterThan(1e-3);
    // A batch-broadcast [1, 1, T, T] mask hides the same keys from both KV heads.
    const shared = tf.tensor4d(hand[0]!.subarray(0, T * T), [1, 1, T, T]);
    const viaShared = forwardRows(model, tokens, { masks: [shared, masks[1]] });
    expect(maxAbsDiff(viaShared[T - 1]!, replayed[T - 1]!)).toBeLessThan(1e-6);
    tf.dispose([...masks, shared]);
    model.dispose();
  });
});
