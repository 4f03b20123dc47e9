import type { EvictionPolicy, KVCacheStore } from '@lethe/kv-cache';
import { StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecoderModel } from '../../src/decoder/index';
import {
  type BatchRequest,
  type BatchResult,
  CapacityError,
  ContinuousBatcher,
} from '../../src/runtime/index';
import { lively, randomTokens, tinyConfig } from '../decoder/helpers';
import { pagedCache } from '../support/cache-implementations';
import { generateAlone, LinearGate, policiesOf, turns } from './batcher-fixtures';

const config = tinyConfig({ vocab_size: 29, max_position_embeddings: 128 });
const CHUNK = 8;
let model: DecoderModel;
let gate: LinearGate;

beforeAll(async () => {
  await initBackend('wasm');
  model = lively(config, 17);
  gate = new LinearGate(config, 5);
});

afterAll(() => {
  gate.dispose();
});

/** A request for prompt `seed` of `length` tokens. */
function request(seed: number, length: number, extra: Partial<BatchRequest> = {}): BatchRequest {
  return {
    prompt: randomTokens(seed, length, config.vocab_size),
    maxNewTokens: 12,
    sampling: { temperature: 0.9, topP: 0.9 },
    seed,
    ...extra,
  };
}

const tokensOf = (result: BatchResult) => Array.from(result.tokens);

describe('ContinuousBatcher', () => {
  it('generates what each request generates alone, greedy and sampled, with mixed policies', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: CHUNK });
    const requests = [
      request(1, 5, { sampling: { temperature: 0 } }),
      request(2, 19, { policies: policiesOf('h2o', config, gate) }),
      request(3, 11, { policies: policiesOf('compute-refresh', config, gate) }),
      request(4, 3, { policies: policiesOf('quest', config, gate), maxNewTokens: 20 }),
      request(5, 9, { policies: policiesOf('gate', config, gate), sampling: { temperature: 0 } }),
    ];
    const results = await Promise.all(requests.map((r) => batcher.submit(r)));
    for (const [i, r] of requests.entries()) {
      const alone = await generateAlone(model, r, CHUNK);
      expect(tokensOf(results[i]!), `request ${i}`).toEqual(alone.tokens);
      expect(Array.from(results[i]!.logProbs)).toEqual(
        Array.from(Float32Array.from(alone.logProbs)),
      );
      expect(results[i]!.finishReason).toBe(alone.finishReason);
      expect(results[i]!.promptTokens).toBe((r.prompt as Int32Array).length);
    }
    await batcher.close();
  });

  it('streams tokens as they are produced, interleaving requests, and stops on `false`', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: CHUNK });
    const events: string[] = [];
    const stream = (name: string, stopAt?: number) => ({
      onToken: ({ index }: { index: number }) => {
        events.push(`${name}${index}`);
        return index !== stopAt;
      },
    });
    const [a, b] = await Promise.all([
      batcher.submit(request(6, 4, { maxNewTokens: 5 }), stream('a')),
      batcher.submit(request(7, 4, { maxNewTokens: 9 }), stream('b', 2)),
    ]);
    expect(events).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'a4']);
    expect(a!.finishReason).toBe('length');
    expect(b!.finishReason).toBe('callback');
    expect(a!.tokens.length).toBe(5);
    expect(b!.tokens.length).toBe(3);
    const alone = await generateAlone(model, request(7, 4, { maxNewTokens: 9 }), CHUNK);
    expect(tokensOf(b!)).toEqual(alone.tokens.slice(0, 3));
    await batcher.close();
  });

  it('stops on EOS and stop sequences, as generate() does', async () => {
    const batcher = new ContinuousBatcher({ model });
    const base = request(8, 6, { maxNewTokens: 30 });
    const free = await generateAlone(model, base, 256);
    const eos = free.tokens[4]!;
    const stopped = await batcher.submit({ ...base, stop: { eosTokenIds: [eos] } });
    expect(stopped.finishReason).toBe('eos');
    expect(tokensOf(stopped)).toEqual(free.tokens.slice(0, free.tokens.indexOf(eos) + 1));
    const sequence = free.tokens.slice(6, 8);
    const bySequence = await batcher.submit({ ...base, stop: { stopSequences: [sequence] } });
    expect(bySequence.finishReason).toBe('stop-sequence');
    await batcher.close();
  });

  it('feeds a long prompt in chunks while the running requests keep decoding', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: 4 });
    const events: string[] = [];
    const short = batcher.submit(request(9, 3, { maxNewTokens: 12 }), {
      onToken: ({ index }) => {
        events.push(`short${index}`);
        return true;
      },
    });
    await turns(3);
    const long = batcher.submit(request(10, 40, { maxNewTokens: 2 }), {
      onToken: ({ index }) => {
        events.push(`long${index}`);
        return true;
      },
    });
    await Promise.all([short, long]);
    // 40 prompt tokens in chunks of 4 take 10 steps, during which the short request decodes.
    const first = events.indexOf('long0');
    expect(events.slice(0, first).filter((e) => e.startsWith('short')).length).toBeGreaterThan(8);
    expect(tokensOf(await long)).toEqual(
      (await generateAlone(model, request(10, 40, { maxNewTokens: 2 }), 4)).tokens,
    );
    await batcher.close();
  });

  it('refuses past maxSequences + maxQueue with E_CAPACITY and a retry-after', async () => {
    const batcher = new ContinuousBatcher({ model, maxSequences: 2, maxQueue: 1 });
    const accepted = [1, 2, 3].map((s) => batcher.submit(request(s, 4, { maxNewTokens: 6 })));
    const refused = await expectLetheRejection(
      batcher.submit(request(4, 4)),
      'E_CAPACITY',
      'request',
    );
    expect(refused).toBeInstanceOf(CapacityError);
    expect((refused as CapacityError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger((refused as CapacityError).retryAfterSeconds)).toBe(true);
    expect(batcher.stats()).toMatchObject({ queued: 3, active: 0 });
    await turns(2);
    expect(batcher.stats()).toMatchObject({ queued: 1, active: 2 });
    await Promise.all(accepted);
    // Slots free again once requests finish.
    await expect(batcher.submit(request(4, 4, { maxNewTokens: 2 }))).resolves.toMatchObject({
      finishReason: 'length',
    });
    await batcher.close();
  });

  it('refuses bad requests with the field named, before queueing them', async () => {
    const batcher = new ContinuousBatcher({ model, maxSequences: 1, maxQueue: 0 });
    const cases: [Partial<BatchRequest>, string, string][] = [
      [{ maxNewTokens: 120 }, 'E_ARG', 'maxNewTokens'],
      [{ maxNewTokens: 0 }, 'E_ARG', 'maxNewTokens'],
      [{ prompt: [] }, 'E_ARG', 'prompt'],
      [{ prompt: [1, 99] }, 'E_ARG', 'prompt'],
      [{ sampling: { temperature: -1 } }, 'E_ARG', 'sampling.temperature'],
      [{ seed: -1 }, 'E_ARG', 'seed'],
      [{ stop: { eosTokenIds: [99] } }, 'E_ARG', 'stop.eosTokenIds'],
      [{ policies: { eviction: {} as EvictionPolicy } }, 'E_ARG', 'policies.eviction'],
      [
        {
          policies: {
            ...policiesOf('compute-refresh', config, gate),
            ...policiesOf('h2o', config, gate),
          },
        },
        'E_ARG',
        'policies.compute.refreshEvery',
      ],
      [{ signal: {} as AbortSignal }, 'E_ARG', 'signal'],
    ];
    for (const [change, code, argument] of cases) {
      await expectLetheRejection(batcher.submit(request(1, 20, change)), code, argument);
    }
    const error = await expectLetheRejection(
      batcher.submit(request(1, 20, { maxNewTokens: 120 })),
      'E_ARG',
      'maxNewTokens',
    );
    expect(error.message).toMatch(/after the prompt \(20 tokens\).*at most 109 fit/);
    await expectLetheRejection(
      batcher.submit(request(1, 4), { onToken: 3 as never }),
      'E_ARG',
      'handlers.onToken',
    );
    expect(batcher.stats()).toMatchObject({ queued: 0, active: 0 });
    await batcher.close();
  });

  it('refuses bad options', () => {
    const cases: [object, string][] = [
      [{ model: {} }, 'model'],
      [{ model, maxSequences: 0 }, 'maxSequences'],
      [{ model, maxQueue: -1 }, 'maxQueue'],
      [{ model, prefillChunk: 1.5 }, 'prefillChunk'],
      [{ model, pageSize: 0 }, 'pageSize'],
      [{ model, createCache: 1 }, 'createCache'],
      [{ model, readAnchors: { sinks: -1 } }, 'readAnchors.sinks'],
    ];
    for (const [options, argument] of cases) {
      expectLetheError(
        () => new ContinuousBatcher(options as ConstructorParameters<typeof ContinuousBatcher>[0]),
        'E_ARG',
        argument,
      );
    }
  });

  it('an abort while queued removes the request; an abort while running settles it at once', async () => {
    const caches: KVCacheStore[] = [];
    const batcher = new ContinuousBatcher({
      model,
      maxSequences: 2,
      createCache: (options) => {
        const cache = pagedCache(options);
        caches.push(cache);
        return cache;
      },
    });
    const others = [request(11, 7, { maxNewTokens: 16 }), request(12, 5, { maxNewTokens: 16 })];
    const running = new AbortController();
    const queued = new AbortController();
    let seen = 0;
    const cancelled = batcher.submit(request(13, 6, { maxNewTokens: 40, signal: running.signal }), {
      onToken: () => {
        seen += 1;
        return true;
      },
    });
    const first = batcher.submit(others[0]!);
    const waiting = batcher.submit(request(14, 6, { signal: queued.signal }));
    queued.abort();
    const left = await waiting;
    expect(left).toMatchObject({ finishReason: 'cancelled', promptTokens: 6 });
    expect(left.tokens.length).toBe(0);
    expect(left.cache.peakTotal).toBe(0);
    const second = batcher.submit(others[1]!);
    await turns(6);
    expect(seen).toBeGreaterThan(0);
    running.abort();
    const stopped = await cancelled;
    expect(stopped.finishReason).toBe('cancelled');
    expect(stopped.tokens.length).toBe(seen);
    expect(stopped.tokens.length).toBeLessThan(40);
    expect(stopped.cache.fullCacheEntries).toBeGreaterThan(0);
    // Its slot and cache are gone at once: only the first other request holds entries; the
    // second waits for the next step.
    const live = (cache: KVCacheStore) =>
      [0, 1].reduce((s, l) => s + cache.liveCounts(l).reduce((a, n) => a + n, 0), 0);
    expect(batcher.stats()).toMatchObject({ active: 1, queued: 1, kvEntries: live(caches[1]!) });
    const results = await Promise.all([first, second]);
    for (const [i, r] of others.entries()) {
      expect(tokensOf(results[i]!)).toEqual((await generateAlone(model, r, 256)).tokens);
    }
    // Three caches were made: the cancelled request's, then the two others'; none for the queued one.
    expect(caches.length).toBe(3);
    await batcher.close();
  });

  it('close() drains, close({ cancel: true }) cancels, and both refuse later requests', async () => {
    const draining = new ContinuousBatcher({ model, maxSequences: 1 });
    const drained = [draining.submit(request(15, 4)), draining.submit(request(16, 4))];
    await draining.close();
    expect((await Promise.all(drained)).map((r) => r.finishReason)).toEqual(['length', 'length']);
    await expectLetheRejection(draining.submit(request(17, 4)), 'E_STATE', 'submit');

    const cancelling = new ContinuousBatcher({ model, maxSequences: 1 });
    const pending = [
      cancelling.submit(request(18, 4, { maxNewTokens: 60 })),
      cancelling.submit(request(19, 4)),
    ];
    await turns(4);
    await cancelling.close({ cancel: true });
    const [running, queued] = await Promise.all(pending);
    expect(running!.finishReason).toBe('cancelled');
    expect(running!.tokens.length).toBeGreaterThan(0);
    expect(queued!.finishReason).toBe('cancelled');
    expect(queued!.tokens.length).toBe(0);
    expect(cancelling.stats()).toMatchObject({ queued: 0, active: 0 });
    await expectLetheRejection(cancelling.submit(request(20, 4)), 'E_STATE', 'submit');
  });

  it('reports each request’s cache and the batcher’s totals', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: CHUNK });
    const keepCount = 10;
    const [full, evicting, steered] = await Promise.all([
      batcher.submit(request(21, 9, { maxNewTokens: 10 })),
      batcher.submit(
        request(22, 9, {
          maxNewTokens: 20,
          policies: policiesOf('streaming-llm', config, gate, keepCount),
        }),
      ),
      batcher.submit(
        request(23, 9, { maxNewTokens: 10, policies: policiesOf('compute', config, gate) }),
      ),
    ]);
    const heads = config.num_hidden_layers * config.num_key_value_heads;
    const layers = config.num_hidden_layers;
    const kv = config.num_key_value_heads;
    // The full cache holds every fed token: prompt + generated − 1.
    expect(full!.cache.peakTotal).toBe((9 + 10 - 1) * heads);
    expect(full!.cache.realisedBudget).toBe(1);
    expect(full!.cache.evictedEntries).toBe(0);
    expect(full!.cache.compute).toBeUndefined();
    expect(full!.cache.reads.entries).toBe(full!.cache.reads.live);
    const fed = 9 + 20 - 1;
    expect(evicting!.cache.fullCacheEntries).toBe(fed * heads);
    expect(Array.from(evicting!.cache.livePerLayer)).toEqual(
      new Array(layers).fill(keepCount * kv),
    );
    expect(evicting!.cache.peakTotal).toBeLessThanOrEqual((keepCount + 1) * heads);
    expect(evicting!.cache.realisedBudget).toBeCloseTo(
      evicting!.cache.peakTotal / (fed * heads),
      12,
    );
    // Every round trims the heads back to the keep count: what was appended minus what is live.
    expect(evicting!.cache.evictedEntries).toBe(fed * heads - keepCount * heads);
    expect(Array.from(evicting!.cache.evictionRounds).every((r) => r > 0)).toBe(true);
    expect(steered!.cache.compute!.steps).toBe(9);
    expect(steered!.cache.compute!.tokenKeep).toBeLessThan(1);
    expect(steered!.cache.reads.entries).toBeLessThan(steered!.cache.reads.live);
    const stats = batcher.stats();
    expect(stats).toEqual({
      queued: 0,
      active: 0,
      generatedTokens: 10 + 20 + 10,
      promptTokens: 27,
      kvEntries: 0,
      evictedEntries: evicting!.cache.evictedEntries,
      evictionRounds: Array.from(evicting!.cache.evictionRounds).reduce((s, r) => s + r, 0),
    });
    await batcher.close();
  });

  it('counts live KV entries of the running requests', async () => {
    const batcher = new ContinuousBatcher({ model });
    let during = 0;
    const done = batcher.submit(request(24, 5, { maxNewTokens: 6 }), {
      onToken: ({ index }) => {
        if (index === 2) during = batcher.stats().kvEntries;
        return true;
      },
    });
    await done;
    // At the third token the cache holds the prompt and the first two generated tokens.
    expect(during).toBe((5 + 2) * config.num_hidden_layers * config.num_key_value_heads);
    await batcher.close();
  });

  it('fails only the request whose policy or handler throws', async () => {
    const batcher = new ContinuousBatcher({ model });
    const broken = new StreamingLLMPolicy({ budget: { keepCount: 6 } });
    broken.select = () => {
      throw new Error('policy bug');
    };
    const good = request(25, 5, { maxNewTokens: 14 });
    const results = await Promise.allSettled([
      batcher.submit(request(26, 5, { maxNewTokens: 14, policies: { eviction: broken } })),
      batcher.submit(good),
      batcher.submit(request(27, 5), {
        onToken: ({ index }) => {
          if (index === 3) throw new Error('handler bug');
          return true;
        },
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/policy bug/);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/handler bug/);
    const fulfilled = (results[1] as PromiseFulfilledResult<BatchResult>).value;
    expect(tokensOf(fulfilled)).toEqual((await generateAlone(model, good, 256)).tokens);
    await batcher.close();
  });

  it('leaves no tensor behind after a run with cancellations and failures', async () => {
    const batcher = new ContinuousBatcher({ model, prefillChunk: 4 });
    await batcher.submit(
      request(28, 4, { maxNewTokens: 2, policies: policiesOf('gate', config, gate) }),
    );
    const before = tf.memory().numTensors;
    const aborts = [new AbortController(), new AbortController()];
    const runs = Promise.allSettled([
      batcher.submit(
        request(29, 13, { signal: aborts[0]!.signal, policies: policiesOf('gate', config, gate) }),
      ),
      batcher.submit(
        request(30, 7, { signal: aborts[1]!.signal, policies: policiesOf('quest', config, gate) }),
      ),
      batcher.submit(request(31, 9, { policies: policiesOf('compute-refresh', config, gate) })),
      batcher.submit(request(32, 6, { policies: policiesOf('h2o', config, gate) })),
      batcher.submit(request(33, 5), {
        onToken: () => {
          throw new Error('handler bug');
        },
      }),
    ]);
    await turns(3);
    aborts[0]!.abort();
    await turns(2);
    aborts[1]!.abort();
    await runs;
    await batcher.close();
    expect(tf.memory().numTensors).toBe(before);
  });
});
