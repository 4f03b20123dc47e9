import {
  type ComputePolicy,
  KVCache,
  type KVCacheStore,
  type LayerControls,
  NO_NEEDS,
  type RandomSource,
  type ReadSelector,
  type StepObservation,
} from '@lethe/kv-cache';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import { GenerationSession, generate } from '../../src/runtime/index';
import { lively, maxAbsDiff, randomTokens, tinyConfig } from '../decoder/helpers';
import { CACHE_IMPLEMENTATIONS, type CacheFactory } from '../support/cache-implementations';
import { RecentWindowPolicy } from './recent-window-policy';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 29 });
/** Long enough for κ = 0.25 to skip pages (page size 4, anchors 4 + 2). */
const prompt = randomTokens(11, 40, config.vocab_size);
const AGGRESSIVE: LayerControls = { activationBits: 2, mlpInputKeep: 0.25, tokenKeep: 0.25 };

/**
 * A compute policy returning `perLayer` for every layer, with a per-sequence state counting its
 * calls and one uniform drawn per step from the sequence's stream; records what it saw.
 */
class Aggressive implements ComputePolicy<{ id: number; calls: number }> {
  readonly name = 'aggressive-test';
  readonly seen: { sequence: number; calls: number; draw: number; observation: StepObservation }[] =
    [];
  private states = 0;
  constructor(
    readonly refreshEvery: number | undefined,
    private readonly perLayer: LayerControls | undefined = AGGRESSIVE,
  ) {}
  createState() {
    return { id: this.states++, calls: 0 };
  }
  controls(observation: StepObservation, rng: RandomSource, state?: { id: number; calls: number }) {
    state!.calls += 1;
    const draw = rng.fillUniform(new Float32Array(1))[0]!;
    this.seen.push({
      sequence: state!.id,
      calls: state!.calls,
      draw,
      observation: { ...observation, hidden: observation.hidden.slice() },
    });
    return Array.from({ length: config.num_hidden_layers }, () => this.perLayer);
  }
}

/** Every live key and value of `cache`, layer by layer (packed views, copied). */
function liveEntries(cache: KVCacheStore): { keys: Float32Array[]; values: Float32Array[] } {
  const keys: Float32Array[] = [];
  const values: Float32Array[] = [];
  for (let l = 0; l < cache.geometry.layers; l++) {
    const view = cache.view(l);
    keys.push(view.keys.slice());
    values.push(view.values!.slice());
  }
  return { keys, values };
}

/** The largest difference between the live keys / values of two caches holding the same entries. */
function entryDistance(a: KVCacheStore, b: KVCacheStore): number {
  const x = liveEntries(a);
  const y = liveEntries(b);
  let worst = 0;
  x.keys.forEach((keys, l) => {
    worst = Math.max(worst, maxAbsDiff(keys, y.keys[l]!), maxAbsDiff(x.values[l]!, y.values[l]!));
  });
  return worst;
}

/** A fresh cache prefilled densely with `tokens` in one pass, and the last token's hidden state. */
function denseCache(
  model: DecoderModel,
  create: CacheFactory,
  tokens: Int32Array,
): { cache: KVCacheStore; hidden: Float32Array } {
  const cache = create({
    geometry: {
      layers: config.num_hidden_layers,
      kvHeads: config.num_key_value_heads,
      headDim: model.headDim,
      pageSize: 16,
    },
    queryHeads: config.num_attention_heads,
    trace: false,
  });
  const out = model.prefill([cache], [tokens]);
  const hidden = out.hidden.dataSync() as Float32Array;
  out.logits.dispose();
  out.hidden.dispose();
  return { cache, hidden: hidden.slice() };
}

describe('SOL KV refresh (compute.refreshEvery)', () => {
  let model: DecoderModel;
  beforeAll(() => {
    model = lively(config, 7);
  });

  describe.each(CACHE_IMPLEMENTATIONS)('with the %s cache', (_, create) => {
    it('after T steps the live entries equal a dense prefill of prompt + the fed tokens', async () => {
      const fed = Int32Array.of(3, 17, 8, 22);
      const all = Int32Array.from([...prompt, ...fed]);
      const dense = denseCache(model, create, all);
      const run = async (refreshEvery: number | undefined) => {
        const policy = new Aggressive(refreshEvery);
        const session = new GenerationSession({ model, compute: policy, createCache: create });
        await session.prefill([prompt]);
        const outputs = [];
        for (const token of fed) outputs.push(await session.step([0], Int32Array.of(token)));
        return { session, policy, outputs };
      };
      const refreshed = await run(4);
      const stale = await run(undefined);
      const cache = refreshed.session.caches[0]!;
      expect(cache.length(0)).toBe(all.length);
      expect(cache.liveCounts(1)).toEqual(dense.cache.liveCounts(1));
      expect(entryDistance(cache, dense.cache)).toBeLessThanOrEqual(1e-5);
      // Without the refresh the entries written under the controls stay polluted.
      expect(entryDistance(stale.session.caches[0]!, dense.cache)).toBeGreaterThan(1e-3);
      // The step's own outputs are returned as usual (the same as without refresh) ...
      refreshed.outputs.forEach((out, i) => {
        expect(out.logits[0]).toEqual(stale.outputs[i]!.logits[0]);
        expect(out.hidden[0]).toEqual(stale.outputs[i]!.hidden[0]);
      });
      expect(refreshed.session.refreshes).toEqual([1]);
      expect(stale.session.refreshes).toEqual([0]);
      // ... and the next step observes the refreshed hidden state.
      await refreshed.session.step([0], Int32Array.of(5));
      const next = refreshed.policy.seen.at(-1)!.observation;
      expect(next.step).toBe(all.length);
      expect(maxAbsDiff(next.hidden, dense.hidden)).toBeLessThanOrEqual(1e-5);
      expect(maxAbsDiff(next.hidden, refreshed.outputs[3]!.hidden[0]!)).toBeGreaterThan(1e-3);
    });
  });

  it('generates the same tokens up to and including the first boundary, and counts refreshes', async () => {
    const prompts = [prompt, prompt.subarray(0, 33)];
    const base = { model, prompts, maxNewTokens: 12, seed: 5, sampling: { temperature: 1 } };
    const plain = await generate({ ...base, compute: new Aggressive(undefined) });
    const refreshed = await generate({ ...base, compute: new Aggressive(4) });
    for (let b = 0; b < 2; b++) {
      // tokens 0..4: token 0 from prefill, token k from step k; the refresh follows step 4
      expect(Array.from(refreshed.tokens[b]!.subarray(0, 5))).toEqual(
        Array.from(plain.tokens[b]!.subarray(0, 5)),
      );
      expect(refreshed.logProbs[b]!.subarray(0, 5)).toEqual(plain.logProbs[b]!.subarray(0, 5));
      // from step 5 on the distribution is the refreshed cache's
      const after = refreshed.logProbs[b]!.subarray(5);
      expect(after.some((lp, i) => Math.abs(lp - plain.logProbs[b]![5 + i]!) > 1e-4)).toBe(true);
    }
    // 11 decode steps per sequence: refreshes after steps 4 and 8
    expect(refreshed.stats.refreshes).toEqual([2, 2]);
    expect(plain.stats.refreshes).toEqual([0, 0]);
    expect(refreshed.stats.decodedTokens).toBe(plain.stats.decodedTokens);
    expect(refreshed.stats.compute).toEqual(plain.stats.compute);
  });

  it('refreshes each sequence after its own T-th step, batching those that reach it together', async () => {
    const calls: number[] = [];
    const counted = Object.create(model, {
      prefillAsync: {
        value: (...args: Parameters<DecoderModel['prefillAsync']>) => {
          calls.push(args[0].length);
          return model.prefillAsync(...args);
        },
      },
    }) as DecoderModel;
    const session = new GenerationSession({ model: counted, compute: new Aggressive(3) });
    await session.prefill([prompt, prompt.subarray(0, 30), prompt.subarray(0, 20)]);
    expect(calls).toEqual([3]);
    await session.step([0, 1, 2], Int32Array.of(1, 2, 3));
    await session.step([0, 1], Int32Array.of(4, 5));
    await session.step([0, 1, 2], Int32Array.of(6, 7, 8)); // 0 and 1 at 3 steps
    expect(calls).toEqual([3, 2]);
    expect(session.refreshes).toEqual([1, 1, 0]);
    await session.step([2], Int32Array.of(9)); // 2 at 3 steps
    expect(calls).toEqual([3, 2, 1]);
    expect(session.refreshes).toEqual([1, 1, 1]);
    expect(session.caches.map((cache) => cache.length(0))).toEqual([43, 33, 23]);
    // a new prefill starts the counts over
    await session.prefill([prompt]);
    expect(session.refreshes).toEqual([0]);
  });

  it('leaves the per-sequence compute state and random streams alone', async () => {
    const run = async (refreshEvery: number | undefined) => {
      const policy = new Aggressive(refreshEvery);
      const result = await generate({
        model,
        prompts: [prompt, prompt.subarray(0, 25)],
        maxNewTokens: 10,
        seed: 9,
        compute: policy,
        forceToken: ({ index }) => (index * 7) % config.vocab_size, // same tokens in both runs
      });
      return { policy, result };
    };
    const plain = await run(undefined);
    const refreshed = await run(2);
    expect(refreshed.result.stats.refreshes).toEqual([4, 4]);
    const trace = (seen: Aggressive['seen']) =>
      seen.map(({ sequence, calls, draw, observation }) => ({
        sequence,
        calls,
        draw,
        step: observation.step,
        token: observation.token,
        live: Array.from(observation.livePerLayer),
      }));
    expect(trace(refreshed.policy.seen)).toEqual(trace(plain.policy.seen));
  });

  it('refuses a bad refreshEvery, or one combined with eviction or a read selector', () => {
    for (const bad of [0, -2, 1.5, Number.NaN, '4' as unknown as number]) {
      expectLetheError(
        () => new GenerationSession({ model, compute: new Aggressive(bad) }),
        'E_ARG',
        'compute.refreshEvery',
      );
    }
    expectLetheError(
      () =>
        new GenerationSession({
          model,
          compute: new Aggressive(4),
          eviction: new RecentWindowPolicy(8, 2),
        }),
      'E_ARG',
      'compute.refreshEvery',
    );
    const selector: ReadSelector = {
      name: 'all-pages-test',
      needs: NO_NEEDS,
      pageSize: 16,
      selectPages: () => undefined,
    };
    expectLetheError(
      () => new GenerationSession({ model, compute: new Aggressive(4), readSelector: selector }),
      'E_ARG',
      'compute.refreshEvery',
    );
    // without refreshEvery both combine as before
    new GenerationSession({ model, compute: new Aggressive(undefined), readSelector: selector });
  });

  it('refuses, before prefill runs, a cache that cannot truncate', async () => {
    for (const overrides of [{ trace: true }, { trackAttention: true }]) {
      const made: KVCache[] = [];
      const session = new GenerationSession({
        model,
        compute: new Aggressive(4),
        createCache: (options) => {
          const cache = new KVCache({ ...options, ...overrides });
          made.push(cache);
          return cache;
        },
      });
      await expectLetheRejection(session.prefill([prompt]), 'E_STATE', 'truncate');
      expect(made[0]!.length(0)).toBe(0);
    }
  });

  it('leaks no tensor across a run with refreshes', async () => {
    const options = {
      model,
      prompts: [prompt, prompt.subarray(0, 21)],
      maxNewTokens: 9,
      seed: 2,
      compute: new Aggressive(3),
    };
    await generate(options); // warm-up (kernels, constants)
    const before = tf.memory().numTensors;
    const result = await generate(options);
    expect(result.stats.refreshes).toEqual([2, 2]);
    expect(tf.memory().numTensors).toBe(before);
  });
});
