import { Rng } from '@lethe/core';
import { KVCache, type LayerObservation, NO_NEEDS } from '@lethe/kv-cache';
import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateValues } from '../../src/gate/gate-values';
import { GsaGate } from '../../src/gate/gsa-gate';
import { GsaPolicy } from '../../src/policy/gsa-policy';
import { normals, randomGate, SHAPE } from '../fixtures';

let gate: GsaGate;
let tensorsBefore: number;

beforeAll(async () => {
  await initBackend('cpu');
  tensorsBefore = tf.memory().numTensors;
  gate = new GsaGate(randomGate('head'));
});

afterAll(() => {
  gate.dispose();
  expect(tf.memory().numTensors).toBe(tensorsBefore);
});

/** A layer observation of 2 KV heads with random live sets (sinks still live) and random gates. */
function randomObservation(rng: Rng, sinks: number, withGates = true): LayerObservation {
  const kvHeads = 2;
  const step = 4 + Math.floor(rng.uniform(1)[0]! * 40);
  const rows = Array.from({ length: kvHeads }, () => {
    const row: number[] = [];
    const keep = rng.uniform(step);
    for (let p = 0; p < step; p++) if (p < sinks || p === step - 1 || keep[p]! < 0.7) row.push(p);
    return row;
  });
  const maxLive = Math.max(...rows.map((r) => r.length));
  const positions = new Int32Array(kvHeads * maxLive).fill(-1);
  const ages = new Int32Array(kvHeads * maxLive);
  const gates = new Float32Array(kvHeads * maxLive);
  rows.forEach((row, h) => {
    // Gates on a coarse grid, so ties happen (they go to the older entry).
    const g = rng.uniform(row.length).map((u) => Math.round(u * 8) / 8);
    row.forEach((p, i) => {
      positions[h * maxLive + i] = p;
      ages[h * maxLive + i] = step - p;
      gates[h * maxLive + i] = g[i]!;
    });
  });
  return {
    layer: 0,
    kvHeads,
    queryHeads: 4,
    headDim: 4,
    step,
    liveCounts: Int32Array.from(rows, (r) => r.length),
    maxLive,
    positions,
    ages,
    ...(withGates ? { gates } : {}),
    window: 0,
  };
}

/** Brute force: the anchors, then the others by gate (higher first, older on ties), up to `k`. */
function expectedKeep(
  observation: LayerObservation,
  h: number,
  anchors: { sinks: number; window: number },
  keepCount: (live: number) => number,
): number[] {
  const { maxLive, liveCounts, positions, gates } = observation;
  const live = liveCounts[h]!;
  const at = (i: number) => h * maxLive + i;
  const indices = Array.from({ length: live }, (_, i) => i);
  const anchored = indices.filter(
    (i) => positions[at(i)]! < anchors.sinks || i >= live - anchors.window,
  );
  const others = indices
    .filter((i) => !anchored.includes(i))
    .sort((a, b) => gates![at(b)]! - gates![at(a)]! || a - b);
  const extra = Math.max(0, keepCount(live) - anchored.length);
  return [...anchored, ...others.slice(0, extra)].sort((a, b) => a - b);
}

describe('GsaPolicy', () => {
  it('is named gsa, needs nothing but the stored gates and carries its gate', () => {
    const policy = new GsaPolicy({ gate, budget: { keepCount: 8 } });
    expect(policy.name).toBe('gsa');
    expect(policy.needs).toBe(NO_NEEDS);
    expect(policy.gate).toBe(gate);
  });

  it('keeps exactly the anchors and the highest gates (keepCount budget)', () => {
    const rng = new Rng(11);
    for (let trial = 0; trial < 200; trial++) {
      const anchors = { sinks: trial % 3, window: trial % 5 };
      const keepCount = anchors.sinks + anchors.window + 1 + (trial % 7);
      const policy = new GsaPolicy({ gate, anchors, budget: { keepCount } });
      const observation = randomObservation(rng, anchors.sinks);
      const decision = policy.select(observation, rng);
      expect(decision.granularity).toBe('head');
      if (decision.granularity !== 'head') return;
      for (let h = 0; h < 2; h++) {
        expect([...decision.keep[h]!]).toEqual(
          expectedKeep(observation, h, anchors, (live) => Math.min(keepCount, live)),
        );
      }
    }
  });

  it('keeps ⌈keepRatio · live⌉ per head the same way (rate budget)', () => {
    const rng = new Rng(12);
    const anchors = { sinks: 1, window: 2 };
    const policy = new GsaPolicy({
      gate,
      anchors,
      budget: { keepRatio: 0.4 },
      trigger: { every: 8 },
    });
    for (let trial = 0; trial < 50; trial++) {
      const observation = randomObservation(rng, anchors.sinks);
      const decision = policy.select(observation, rng);
      if (decision.granularity !== 'head') throw new Error('expected per-head keep sets');
      for (let h = 0; h < 2; h++) {
        expect([...decision.keep[h]!]).toEqual(
          expectedKeep(observation, h, anchors, (live) => Math.ceil(0.4 * live)),
        );
      }
    }
  });

  it('scores a copy of the stored gates', () => {
    const observation = randomObservation(new Rng(3), 0);
    const policy = new GsaPolicy({ gate, budget: { keepCount: 4 } });
    const scores = policy.score(observation);
    expect(scores).toEqual(observation.gates);
    expect(scores).not.toBe(observation.gates);
  });

  it('refuses an observation without gates: the cache must store them', () => {
    const policy = new GsaPolicy({ gate, budget: { keepCount: 4 } });
    const error = expectLetheError(
      () => policy.select(randomObservation(new Rng(4), 0, false), new Rng(0)),
      'E_STATE',
      'observation.gates',
    );
    expect(error.message).toContain('storeGates');
  });

  it('runs on a KVCache that stores the gates the reference computes', () => {
    const anchors = { sinks: 2, window: 4 };
    const capacity = 12;
    const policy = new GsaPolicy({
      gate,
      anchors,
      budget: { keepCount: capacity - 1 },
      trigger: { whenLiveExceeds: capacity - 1 },
    });
    const parameters = randomGate('head');
    const { kvHeads, hiddenSize } = SHAPE;
    const cache = new KVCache({
      geometry: { layers: 1, kvHeads, headDim: 4, pageSize: 4 },
      queryHeads: 4,
      anchors: policy.anchors,
      storeGates: true,
    });
    const rng = new Rng(5);
    const written = new Map<number, Float32Array>();
    for (let t = 0; t < 40; t++) {
      const g = gateValues(parameters, 1, normals(hiddenSize, 50 + t), 1);
      written.set(t, g);
      cache.append(0, rng.normal(kvHeads * 4), rng.normal(kvHeads * 4), Int32Array.of(t), g);
      const context = { layer: 0, step: t + 1, liveCounts: cache.liveCounts(0), sinceLastRound: 1 };
      if (policy.shouldEvict(context)) {
        const observation = cache.observe(0, policy.needs);
        const decision = policy.select(observation, rng);
        if (decision.granularity !== 'head') throw new Error('expected per-head keep sets');
        for (let h = 0; h < kvHeads; h++) {
          // The observation's gates are the ones written with each entry.
          for (let i = 0; i < observation.liveCounts[h]!; i++) {
            const position = observation.positions[h * observation.maxLive + i]!;
            expect(observation.gates![h * observation.maxLive + i]).toBe(written.get(position)![h]);
          }
          expect([...decision.keep[h]!]).toEqual(
            expectedKeep(observation, h, anchors, (live) => Math.min(capacity - 1, live)),
          );
        }
        cache.keep(0, decision);
      }
      expect(Math.max(...cache.liveCounts(0))).toBeLessThanOrEqual(capacity);
    }
    const plain = new KVCache({
      geometry: { layers: 1, kvHeads, headDim: 4, pageSize: 4 },
      queryHeads: 4,
    });
    plain.append(0, new Float32Array(kvHeads * 4), new Float32Array(kvHeads * 4), Int32Array.of(0));
    expectLetheError(
      () => policy.select(plain.observe(0, policy.needs), rng),
      'E_STATE',
      'observation.gates',
    );
  });

  it('refuses anchors the keep count cannot hold', () => {
    expectLetheError(
      () => new GsaPolicy({ gate, anchors: { sinks: 4, window: 8 }, budget: { keepCount: 10 } }),
      'E_BUDGET',
      'anchors',
    );
  });
});
