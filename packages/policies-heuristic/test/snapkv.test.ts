import type { LayerObservation } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { SnapKVPolicy } from '../src/index';
import { keptOf, lcg, NO_RANDOM, observation, range } from './observation';

const LIVE = 20;
const WINDOW = 4;
const QUERY_HEADS = 2;

/** 1 KV head shared by 2 query heads, 20 live entries, the last 4 queries observed. */
function snapObservation(
  attentionOf: (w: number, q: number, i: number) => number,
): LayerObservation {
  const attention = new Float32Array(WINDOW * QUERY_HEADS * LIVE);
  for (let w = 0; w < WINDOW; w++) {
    for (let q = 0; q < QUERY_HEADS; q++) {
      for (let i = 0; i < LIVE; i++)
        attention[(w * QUERY_HEADS + q) * LIVE + i] = attentionOf(w, q, i);
    }
  }
  return { ...observation([range(LIVE)], { queryHeads: QUERY_HEADS }), window: WINDOW, attention };
}

/** Brute force of kvpress's SnapKV score on the prefix (entries before the window). */
function bruteSnapKV(obs: LayerObservation, kernel: number): number[] {
  const prefix = LIVE - WINDOW;
  const attention = obs.attention!;
  const perHead = range(QUERY_HEADS).map((q) => {
    const mean = range(prefix).map(
      (i) =>
        range(WINDOW).reduce((s, w) => s + attention[(w * QUERY_HEADS + q) * LIVE + i], 0) / WINDOW,
    );
    const r = (kernel - 1) / 2;
    const padded = [...Array(r).fill(0), ...mean, ...Array(r).fill(0)];
    return range(prefix).map(
      (i) => padded.slice(i, i + kernel).reduce((a, b) => a + b, 0) / kernel,
    );
  });
  return range(prefix).map((i) => (perHead[0][i] + perHead[1][i]) / QUERY_HEADS);
}

describe('SnapKVPolicy', () => {
  it('matches a brute-force window mean, average pool and group mean', () => {
    const random = lcg(11);
    const obs = snapObservation(() => random());
    for (const kernelSize of [1, 3, 5, 7]) {
      const policy = new SnapKVPolicy({ budget: { keepCount: 8 }, windowSize: WINDOW, kernelSize });
      const scores = policy.score(obs);
      const want = bruteSnapKV(obs, kernelSize);
      want.forEach((w, i) => {
        expect(scores[i]).toBeCloseTo(w, 6);
      });
      // The window's own entries get the highest prefix score.
      for (let i = LIVE - WINDOW; i < LIVE; i++)
        expect(scores[i]).toBeCloseTo(Math.max(...want), 6);
    }
  });

  it('pooling prefers a cluster of attended keys over an isolated peak', () => {
    // Entry 3 alone draws 0.3; entries 9–11 draw 0.2 each, their outer neighbours 0.05 and 0.03
    // (so the pooled maximum, centred on entry 10, is unique).
    const cluster = [9, 10, 11];
    const background = (i: number) => (i === 8 ? 0.05 : i === 12 ? 0.03 : 0.01);
    const obs = snapObservation((_, __, i) =>
      i === 3 ? 0.3 : cluster.includes(i) ? 0.2 : background(i),
    );
    const pooled = new SnapKVPolicy({ budget: { keepCount: WINDOW + 1 }, windowSize: WINDOW });
    const keptPooled = keptOf(pooled.select(obs, NO_RANDOM));
    const brute = bruteSnapKV(obs, 5);
    const best = brute.indexOf(Math.max(...brute));
    expect(best).toBe(10);
    expect(keptPooled).toEqual([best, 16, 17, 18, 19]);
    const unpooled = new SnapKVPolicy({
      budget: { keepCount: WINDOW + 1 },
      windowSize: WINDOW,
      kernelSize: 1,
    });
    expect(keptOf(unpooled.select(obs, NO_RANDOM))).toEqual([3, 16, 17, 18, 19]);
  });

  it('refuses an observation window a keep count cannot hold; a keep ratio keeps it whole', () => {
    expectLetheError(
      () => new SnapKVPolicy({ budget: { keepCount: WINDOW - 1 }, windowSize: WINDOW }),
      'E_BUDGET',
      'windowSize',
    );
    const obs = snapObservation((_, __, i) => (i < 4 ? 0.9 : 0.001));
    const policy = new SnapKVPolicy({
      budget: { keepRatio: 0.1 },
      trigger: { every: 1 },
      windowSize: WINDOW,
      anchors: { sinks: 0, window: 1 },
    });
    expect(policy.anchors).toEqual({ sinks: 0, window: WINDOW });
    expect(keptOf(policy.select(obs, NO_RANDOM))).toEqual([16, 17, 18, 19]);
  });

  it('uses the kvpress defaults and validates its options', () => {
    const policy = new SnapKVPolicy({ budget: { keepCount: 128 } });
    expect([policy.windowSize, policy.kernelSize, policy.needs.attentionWindow]).toEqual([
      64, 5, 64,
    ]);
    expectLetheError(
      () => new SnapKVPolicy({ budget: { keepCount: 128 }, kernelSize: 4 }),
      'E_ARG',
      'kernelSize',
    );
    expectLetheError(
      () => new SnapKVPolicy({ budget: { keepCount: 128 }, windowSize: 0 }),
      'E_ARG',
      'windowSize',
    );
    expectLetheError(
      () => policy.select(observation([range(5)]), NO_RANDOM),
      'E_ARG',
      'observation.window',
    );
  });
});
