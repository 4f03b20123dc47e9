import { type KVCacheStore, NO_NEEDS, type ReadSelector } from '@lethe/kv-cache';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import { CACHE_IMPLEMENTATIONS, entryCounts, pagedCache } from '../support/cache-implementations';
import { lively, storeFor, takeLogits, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig();
const prompts = () => [Int32Array.of(1, 2, 3), Int32Array.of(4, 5)];

/** Everything a step could change in a cache: lengths, live entries, keys, values, positions, stats. */
function snapshot(caches: readonly KVCacheStore[]) {
  return caches.map((cache) => ({
    stats: entryCounts(cache.stats()),
    layers: Array.from({ length: config.num_hidden_layers }, (_, l) => {
      const view = cache.view(l);
      return {
        length: cache.length(l),
        live: Array.from(cache.liveCounts(l)),
        keys: Array.from(view.keys),
        values: Array.from(view.values!),
        positions: Array.from(view.positions),
      };
    }),
  }));
}

/** Runs `fail` (which must throw `E_STATE`/`E_ARG`/…) and checks it leaked no tensor and changed no cache. */
function expectNothingChanged(caches: readonly KVCacheStore[], fail: () => void): void {
  const before = snapshot(caches);
  const tensors = tf.memory().numTensors;
  fail();
  expect(tf.memory().numTensors).toBe(tensors);
  expect(snapshot(caches)).toEqual(before);
}

/** Sets every weight of `name` to NaN and returns a function that restores them. */
function poison(model: DecoderModel, name: string): () => void {
  const variable = model.parameters.get(name)!;
  const saved = variable.clone();
  variable.assign(tf.fill(variable.shape, Number.NaN));
  return () => {
    variable.assign(saved);
    saved.dispose();
  };
}

describe.each(CACHE_IMPLEMENTATIONS)(
  '%s: a cached step that fails changes nothing',
  (_, create) => {
    const make = () => [
      storeFor(create, config, { queryWindow: 2, trackAttention: true }),
      storeFor(create, config),
    ];

    it('NaN weights in layer 1: E_STATE naming model, no tensor leaked, every layer as before (regression)', () => {
      const model = lively(config, 21);
      const reference = lively(config, 21);
      const caches = make();
      const referenceCaches = make();
      takeLogits(model.prefill(caches, prompts()));
      takeLogits(reference.prefill(referenceCaches, prompts()));
      const restore = poison(model, 'model.layers.1.self_attn.k_proj.weight');
      expectNothingChanged(caches, () => {
        const error = expectLetheError(
          () => model.decodeStep(caches, Int32Array.of(6, 7)),
          'E_STATE',
          'model',
        );
        expect(error.message).toContain('layer 1 produced keys with a non-finite value (NaN)');
      });
      restore();
      // The failed step left no trace: the next one gives exactly the logits of a run without it.
      expect(takeLogits(model.decodeStep(caches, Int32Array.of(6, 7)))).toEqual(
        takeLogits(reference.decodeStep(referenceCaches, Int32Array.of(6, 7))),
      );
      model.dispose();
      reference.dispose();
    });

    it('a prefill whose values overflow in layer 1 changes nothing either', () => {
      const model = lively(config, 22);
      const caches = make();
      const restore = poison(model, 'model.layers.1.self_attn.v_proj.weight');
      expectNothingChanged(caches, () => {
        expectLetheError(() => model.prefill(caches, prompts()), 'E_STATE', 'model');
      });
      restore();
      model.dispose();
    });

    it('a failure injected inside the step (the read selector throws in layer 1) or a bad token id', () => {
      const model = lively(config, 23);
      const caches = make();
      takeLogits(model.prefill(caches, prompts()));
      const failing: ReadSelector = {
        name: 'failing',
        needs: NO_NEEDS,
        pageSize: 4,
        selectPages: (observation) => {
          if (observation.layer === 1) throw new Error('injected failure');
          return undefined;
        },
      };
      expectNothingChanged(caches, () => {
        expect(() =>
          model.decodeStep(caches, Int32Array.of(6, 7), undefined, { readSelector: failing }),
        ).toThrow('injected failure');
      });
      expectNothingChanged(caches, () => {
        expectLetheError(
          () => model.decodeStep(caches, Int32Array.of(6, 99)),
          'E_ARG',
          'tokens[1]',
        );
      });
      model.dispose();
    });
  },
);

it('a cache that breaks the contract by throwing in append: the step still frees its tensors (regression)', () => {
  const model = lively(config, 24);
  const cache = storeFor(pagedCache, config);
  takeLogits(model.prefill([cache], prompts().slice(0, 1)));
  const broken: KVCacheStore = Object.create(cache, {
    append: {
      value: () => {
        throw new Error('disk full');
      },
    },
  });
  const tensors = tf.memory().numTensors;
  expect(() => model.decodeStep([broken], Int32Array.of(6))).toThrow('disk full');
  expect(tf.memory().numTensors).toBe(tensors);
  model.dispose();
});
