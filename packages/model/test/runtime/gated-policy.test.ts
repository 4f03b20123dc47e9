import {
  type Anchors,
  type AttentionGate,
  type EvictionPolicy,
  type KeepDecision,
  type LayerObservation,
  NO_NEEDS,
  type TriggerContext,
} from '@lethe/kv-cache';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationSession } from '../../src/runtime/session';
import { lively, maxAbsDiff, tinyConfig } from '../decoder/helpers';
import { asKVCache } from '../support/cache-implementations';

// A policy with a gate (GSA) makes the session run the gate in every layer, store it with each
// entry and bias every read by log g. Checked against the parallel forward with the same gate and
// the rollout's replay masks: the gated prefill and token-by-token decode give the same logits.

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const KV = config.num_key_value_heads;
const CAPACITY = 5;

/** log σ(x·W_l): a linear gate per layer, random weights. */
class LinearGate implements AttentionGate<tf.Tensor> {
  readonly name = 'linear-gate-test';
  readonly calls: number[] = [];
  private readonly weights: tf.Tensor2D[];

  constructor(seed: number) {
    const rng = new Rng(seed);
    this.weights = Array.from({ length: config.num_hidden_layers }, () =>
      tf.tensor2d(rng.normal(config.hidden_size * KV, 0, 0.8), [config.hidden_size, KV]),
    );
  }

  logGates(layer: number, x: tf.Tensor): tf.Tensor {
    this.calls.push(layer);
    return tf.tidy(() => {
      const [batch, length] = x.shape as [number, number, number];
      const logits = tf.matMul(tf.reshape(x, [batch * length, -1]), this.weights[layer]!);
      return tf.transpose(tf.logSigmoid(tf.reshape(logits, [batch, length, KV])), [0, 2, 1]);
    });
  }

  dispose(): void {
    tf.dispose(this.weights);
  }
}

/** Keeps the newest entry and the highest gates, `CAPACITY − 1` per head, once a head is full. */
class TopGatePolicy implements EvictionPolicy {
  readonly name = 'top-gate-test';
  readonly needs = NO_NEEDS;
  readonly anchors: Anchors = { sinks: 0, window: 1 };
  readonly rounds: { gates: number[][]; keep: number[][] }[] = [];

  constructor(readonly gate: AttentionGate) {}

  shouldEvict(context: TriggerContext): boolean {
    return context.liveCounts.some((n) => n >= CAPACITY);
  }

  select(observation: LayerObservation): KeepDecision {
    const { kvHeads, maxLive, liveCounts, gates } = observation;
    if (gates === undefined) throw new Error('the session stored no gates');
    const rows: number[][] = [];
    const keep = Array.from({ length: kvHeads }, (_, h) => {
      const live = liveCounts[h]!;
      const row = [...gates.subarray(h * maxLive, h * maxLive + live)];
      rows.push(row);
      const older = row.slice(0, -1).map((g, i) => [g, i] as const);
      older.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      const chosen = older.slice(0, CAPACITY - 2).map(([, i]) => i);
      return Int32Array.from([...chosen, live - 1].sort((a, b) => a - b));
    });
    this.rounds.push({ gates: rows, keep: keep.map((k) => [...k]) });
    return { granularity: 'head', keep };
  }
}

/** Parallel-forward logits of `tokens` with the gate hook and per-layer, per-head masks. */
function gatedForward(
  model: ReturnType<typeof lively>,
  gate: LinearGate,
  tokens: number[],
  masks: Uint8Array[][],
): Float32Array[] {
  const T = tokens.length;
  return tf.tidy(() => {
    const ids = tf.tensor2d([tokens], [1, T], 'int32');
    const maskTensors = masks.map((perHead) => {
      const flat = new Float32Array(KV * T * T);
      perHead.forEach((m, h) => flat.set(m, h * T * T));
      return tf.tensor4d(flat, [1, KV, T, T]);
    });
    const { logits } = model.forward(ids, {
      masks: maskTensors,
      keyBias: (layer, x) => gate.logGates(layer, x),
    });
    const data = logits.dataSync() as Float32Array;
    const V = config.vocab_size;
    return Array.from({ length: T }, (_, t) => data.slice(t * V, (t + 1) * V));
  });
}

let model: ReturnType<typeof lively>;
beforeAll(() => {
  model = lively(config, 8);
});
afterAll(() => model.dispose());

describe('a gated eviction policy in the session', () => {
  it('gated chunked prefill and decode equal the gated parallel forward with the replay masks', async () => {
    const gate = new LinearGate(21);
    const policy = new TopGatePolicy(gate);
    const prompt = Int32Array.from({ length: 9 }, (_, i) => (7 * i + 2) % 23);
    const forced = [3, 17, 9, 1, 22, 14, 6, 11, 4, 19];
    const before = tf.memory().numTensors;
    const session = new GenerationSession({ model, eviction: policy, prefillChunk: 4 });
    const rows = [(await session.prefill([prompt])).logits[0]!];
    for (const token of forced)
      rows.push((await session.step([0], Int32Array.of(token))).logits[0]!);
    expect(tf.memory().numTensors).toBe(before);

    const cache = asKVCache(session.caches[0]);
    expect(cache.storeGates).toBe(true);
    expect(Math.max(...cache.stats().livePerHead)).toBeLessThanOrEqual(CAPACITY);
    expect(policy.rounds.length).toBeGreaterThan(10);
    // Every round saw gates in (0, 1) and kept the highest of them besides the newest entry.
    for (const round of policy.rounds) {
      round.gates.forEach((row, h) => {
        expect(row.every((g) => g > 0 && g < 1)).toBe(true);
        const keptOlder = round.keep[h]!.filter((i) => i < row.length - 1).map((i) => row[i]!);
        const dropped = row.slice(0, -1).filter((_, i) => !round.keep[h]!.includes(i));
        if (dropped.length > 0)
          expect(Math.min(...keptOlder)).toBeGreaterThanOrEqual(Math.max(...dropped));
      });
    }
    // Heads kept different entries: the gate acts per KV head.
    const [first, second] = [0, 1].map((h) => cache.replayMask(0, h));
    expect(maxAbsDiff(first!, second!)).toBe(1);

    const all = [...prompt, ...forced];
    const masks = Array.from({ length: config.num_hidden_layers }, (_, l) =>
      Array.from({ length: KV }, (_, h) => cache.replayMask(l, h)),
    );
    const reference = gatedForward(model, gate, all, masks);
    rows.forEach((row, i) => {
      expect(maxAbsDiff(row, reference[prompt.length - 1 + i]!)).toBeLessThan(1e-4);
    });
    // The gate matters: without its bias the logits move.
    const ungated = tf.tidy(() => {
      const ids = tf.tensor2d([all], [1, all.length], 'int32');
      return model.forward(ids).logits.dataSync() as Float32Array;
    });
    const V = config.vocab_size;
    const last = ungated.slice((all.length - 1) * V, all.length * V);
    expect(maxAbsDiff(last, reference[all.length - 1]!)).toBeGreaterThan(1e-3);
    gate.dispose();
  });

  it('runs the gate once per layer for each chunk and step, and refuses a gate without logGates', async () => {
    const gate = new LinearGate(3);
    const session = new GenerationSession({
      model,
      eviction: new TopGatePolicy(gate),
      prefillChunk: 4,
    });
    await session.prefill([Int32Array.of(1, 2, 3, 4, 5, 6)]);
    await session.step([0], Int32Array.of(7));
    const layers = config.num_hidden_layers;
    expect(gate.calls).toEqual(Array.from({ length: 3 * layers }, (_, i) => i % layers));
    gate.dispose();
    const broken = { name: 'broken' } as unknown as AttentionGate;
    expect(() => new GenerationSession({ model, eviction: new TopGatePolicy(broken) })).toThrow(
      /E_ARG.*eviction\.gate/,
    );
  });
});
