import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';
import { asKVCache, CACHE_IMPLEMENTATIONS } from '../support/cache-implementations';
import { RecentWindowPolicy } from './recent-window-policy';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const model = () => lively(config, 3);
const prompt = (n: number, offset = 0) =>
  Int32Array.from({ length: n }, (_, i) => (5 * i + offset) % 23);

/** Parallel-forward logits of `tokens` under optional per-layer masks, as host rows. */
function forwardRows(
  m: ReturnType<typeof model>,
  tokens: number[],
  masks?: Uint8Array[][],
): Float32Array[] {
  const T = tokens.length;
  const Hkv = config.num_key_value_heads;
  return tf.tidy(() => {
    const ids = tf.tensor2d([tokens], [1, T], 'int32');
    const maskTensors = masks?.map((perHead) => {
      const flat = new Float32Array(Hkv * T * T);
      perHead.forEach((m2, h) => flat.set(m2, h * T * T));
      return tf.tensor4d(flat, [1, Hkv, T, T]);
    });
    const logits = m.forward(ids, { masks: maskTensors }).logits;
    const data = logits.dataSync() as Float32Array;
    const V = config.vocab_size;
    return Array.from({ length: T }, (_, t) => data.slice(t * V, (t + 1) * V));
  });
}

const argmax = (row: Float32Array) => row.reduce((best, v, i) => (v > row[best]! ? i : best), 0);

/** Runs a test once per `KVCacheStore` implementation behind the session (`createCache`). */
const eachCache = it.each(CACHE_IMPLEMENTATIONS);

describe('generate', () => {
  eachCache('%s: greedy, full cache: tokens follow the parallel forward', async (_, create) => {
    const m = model();
    const p = prompt(6);
    const result = await generate({
      model: m,
      prompts: [p],
      maxNewTokens: 12,
      sampling: { temperature: 0 },
      createCache: create,
    });
    const all = [...p, ...result.tokens[0]!];
    const rows = forwardRows(m, all);
    result.tokens[0]!.forEach((token, i) => expect(token).toBe(argmax(rows[p.length - 1 + i]!)));
    expect(result.finishReasons).toEqual(['length']);
    expect(result.stats.caches[0]!.livePerLayer[0]).toBe(
      config.num_key_value_heads * (all.length - 1),
    );
  });

  it('under per-head eviction, greedy tokens equal the argmax of a forward with the replay masks', async () => {
    const m = model();
    const p = prompt(5);
    const policy = new RecentWindowPolicy(6, 2, true);
    const result = await generate({
      model: m,
      prompts: [p],
      maxNewTokens: 20,
      eviction: policy,
      sampling: { temperature: 0 },
      seed: 4,
    });
    const stats = result.stats.caches[0]!;
    expect(Array.from(stats.evictionRounds).every((r) => r > 0)).toBe(true);
    expect(Math.max(...stats.livePerHead)).toBeLessThanOrEqual(6 + 2);
    // Rebuild what each query saw from the visibility trace, then replay in one forward.
    const { GenerationSession } = await import('../../src/runtime/session');
    const session = new GenerationSession({ model: m, eviction: policy, seed: 4 });
    await session.prefill([p]);
    const tokens = result.tokens[0]!;
    for (let i = 0; i < tokens.length - 1; i++) await session.step([0], Int32Array.of(tokens[i]!));
    const cache = asKVCache(session.caches[0]);
    const masks = Array.from({ length: config.num_hidden_layers }, (_, l) =>
      Array.from({ length: config.num_key_value_heads }, (_, h) => cache.replayMask(l, h)),
    );
    const all = [...p, ...tokens.slice(0, -1)];
    const rows = forwardRows(m, all, masks);
    tokens.forEach((token, i) => expect(token).toBe(argmax(rows[p.length - 1 + i]!)));
    // The masks really hide something: without them some prediction differs or logits move.
    const unmasked = forwardRows(m, all);
    const moved = rows.some((r, t) => r.some((v, j) => Math.abs(v - unmasked[t]![j]!) > 1e-3));
    expect(moved).toBe(true);
  });

  eachCache('%s: a batch gives the tokens of one-at-a-time runs (same ids)', async (_, create) => {
    const m = model();
    const prompts = [prompt(4), prompt(9, 1), prompt(6, 2)];
    const policy = new RecentWindowPolicy(5, 1, true, { attentionWindow: 2 });
    const options = {
      model: m,
      maxNewTokens: 10,
      eviction: policy,
      sampling: { temperature: 1 },
      seed: 11,
      createCache: create,
    };
    const batched = await generate({ ...options, prompts });
    for (let b = 0; b < prompts.length; b++) {
      const single = await generate({ ...options, prompts: [prompts[b]!], streamIds: [b] });
      expect(Array.from(single.tokens[0]!)).toEqual(Array.from(batched.tokens[b]!));
      expect(single.logProbs[0]![3]).toBeCloseTo(batched.logProbs[b]![3]!, 4);
      expect(Array.from(single.stats.caches[0]!.livePerHead)).toEqual(
        Array.from(batched.stats.caches[b]!.livePerHead),
      );
    }
  });

  it('is reproducible for a seed and stops on eos, stop sequences and the callback', async () => {
    const m = model();
    const base = { model: m, prompts: [prompt(4)], maxNewTokens: 15, seed: 2 };
    const a = await generate(base);
    const b = await generate(base);
    expect(Array.from(a.tokens[0]!)).toEqual(Array.from(b.tokens[0]!));
    const eos = a.tokens[0]![4]!;
    const first = a.tokens[0]!.indexOf(eos);
    const stopped = await generate({ ...base, stop: { eosTokenIds: [eos] } });
    expect(stopped.finishReasons).toEqual(['eos']);
    expect(stopped.tokens[0]!.length).toBe(first + 1);
    const seq = a.tokens[0]!.slice(first, first + 2);
    const bySeq = await generate({ ...base, stop: { stopSequences: [seq] } });
    expect(bySeq.finishReasons).toEqual(['stop-sequence']);
    const streamed: number[] = [];
    const cb = await generate({
      ...base,
      onToken: (e) => {
        streamed.push(e.token);
        return e.index < 2;
      },
    });
    expect(cb.finishReasons).toEqual(['callback']);
    expect(streamed).toEqual(Array.from(a.tokens[0]!.slice(0, 3)));
    expect(Array.from(cb.tokens[0]!)).toEqual(streamed);
  });

  it('rejects bad input naming the argument', async () => {
    const m = model();
    await expect(
      generate({ model: m, prompts: [prompt(3)], maxNewTokens: 0 }),
    ).rejects.toMatchObject({ argument: 'maxNewTokens' });
    await expect(
      generate({ model: m, prompts: [new Int32Array(0)], maxNewTokens: 2 }),
    ).rejects.toMatchObject({ argument: 'prompts[0]' });
    await expect(
      generate({ model: m, prompts: [prompt(3)], maxNewTokens: 2, sampling: { topP: 2 } }),
    ).rejects.toMatchObject({ argument: 'sampling.topP' });
    await expect(
      generate({ model: m, prompts: [prompt(3)], maxNewTokens: 2, stop: { eosTokenIds: [99] } }),
    ).rejects.toMatchObject({ argument: 'stop.eosTokenIds' });
  });

  eachCache('%s: leaks no tensors across 1,000 decode steps with evictions', async (_, create) => {
    const m = model();
    const counts: number[] = [];
    const before = tf.memory().numTensors;
    const result = await generate({
      model: m,
      prompts: [prompt(4)],
      maxNewTokens: 1001,
      eviction: new RecentWindowPolicy(16, 8, false, { attentionWindow: 4 }),
      seed: 1,
      createCache: create,
      onToken: (e) => {
        if (e.index === 10 || e.index === 1000) counts.push(tf.memory().numTensors);
        return true;
      },
    });
    expect(result.tokens[0]!.length).toBe(1001);
    expect(counts[1]).toBe(counts[0]);
    expect(tf.memory().numTensors).toBe(before);
    expect(result.stats.caches[0]!.peakPerLayer[0]).toBeLessThanOrEqual(
      config.num_key_value_heads * (16 + 8 + 1),
    );
  });
});

describe('decode throughput', () => {
  it('counts the tokens the decode loop fed through the model over its time (regression)', async () => {
    const m = model();
    let clock = 0;
    // Every reading advances 1 ms: the decode loop's span is its number of readings apart.
    const result = await generate({
      model: m,
      prompts: [prompt(4), prompt(6, 1)],
      maxNewTokens: 5,
      stop: { eosTokenIds: [], stopSequences: [] },
      seed: 1,
      now: () => clock++,
      onStep: () => {
        clock += 10;
      },
    });
    m.dispose();
    const fed = result.tokens.reduce((s, t) => s + t.length - 1, 0);
    expect(result.stats.generatedTokens).toBe(10);
    // Each sequence's first token comes from prefill's logits and its last is never fed back.
    expect(result.stats.decodedTokens).toBe(fed);
    expect(fed).toBe(8);
    expect(result.stats.tokensPerSecond).toBeCloseTo((fed / result.stats.decodeMs) * 1000, 9);
  });
});
