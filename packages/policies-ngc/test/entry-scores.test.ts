import { KVCache } from '@lethe/kv-cache';
import { Rng } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { blockScores, entryScores, sharedLiveCount } from '../src/index';
import { attentionObservation } from './helpers';

describe('entryScores', () => {
  // 2 KV heads, 4 query heads, 2 observed queries, 3 live entries at positions 3, 7, 9.
  const rows = [
    [3, 7, 9],
    [3, 7, 9],
  ];
  const attention = [
    [
      [0.5, 0.5, 0],
      [0.2, 0.8, 0],
      [1, 0, 0],
      [0.1, 0.6, 0.3],
    ],
    [
      [0.3, 0.3, 0.4],
      [0, 0.5, 0.5],
      [0.25, 0.25, 0.5],
      [0.9, 0.1, 0],
    ],
  ];

  it('averages the attention over all query heads and observed queries (by hand)', () => {
    const scores = entryScores(attentionObservation(rows, attention, { queryHeads: 4 }));
    // Column sums over the 8 (query, head) rows, divided by 8.
    expect(scores[0]).toBeCloseTo((0.5 + 0.2 + 1 + 0.1 + 0.3 + 0 + 0.25 + 0.9) / 8, 6);
    expect(scores[1]).toBeCloseTo((0.5 + 0.8 + 0 + 0.6 + 0.3 + 0.5 + 0.25 + 0.1) / 8, 6);
    expect(scores[2]).toBeCloseTo((0 + 0 + 0 + 0.3 + 0.4 + 0.5 + 0.5 + 0) / 8, 6);
    expect(scores.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });

  it('block scores are the masked mean per block; the short last block averages its own entries', () => {
    const observation = attentionObservation(rows, attention, { queryHeads: 4 });
    const scores = entryScores(observation);
    const blocks = blockScores(observation, 2);
    expect(blocks.length).toBe(2);
    expect(blocks[0]).toBeCloseTo((scores[0]! + scores[1]!) / 2, 6);
    expect(blocks[1]).toBeCloseTo(scores[2]!, 6);
    expect([...blockScores(observation, 3)]).toEqual([
      Math.fround((scores[0]! + scores[1]! + scores[2]!) / 3),
    ]);
    expect(blockScores(observation, 8).length).toBe(1);
    expectLetheError(() => blockScores(observation, 0), 'E_ARG', 'blockSize');
  });

  it('matches softmax attention recomputed from a real KVCache (queries · keys, causal)', () => {
    const geometry = { layers: 1, kvHeads: 2, headDim: 4, pageSize: 4 };
    const queryHeads = 4;
    const window = 3;
    const cache = new KVCache({ geometry, queryHeads, queryWindow: window });
    const rng = new Rng(4);
    const width = geometry.kvHeads * geometry.headDim;
    const keys: Float32Array[] = [];
    const queries: Float32Array[] = [];
    for (let t = 0; t < 10; t++) {
      const k = rng.normal(width);
      const q = rng.normal(queryHeads * geometry.headDim);
      keys.push(k);
      queries.push(q);
      cache.append(0, k, rng.normal(width), Int32Array.of(t));
      cache.recordQueries(0, q, Int32Array.of(t));
    }
    const observation = cache.observe(0, {
      attentionWindow: window,
      accumulatedAttention: false,
      keys: false,
      values: false,
      hidden: false,
    });
    const scores = entryScores(observation);
    // Independent reference: softmax(q·k/√d) per query head over the entries at or before the query.
    const d = geometry.headDim;
    const expected = new Float64Array(10);
    for (let t = 10 - window; t < 10; t++) {
      for (let h = 0; h < queryHeads; h++) {
        const kv = Math.floor(h / (queryHeads / geometry.kvHeads));
        const logits = Array.from({ length: t + 1 }, (_, i) => {
          let dot = 0;
          for (let c = 0; c < d; c++) dot += queries[t]![h * d + c]! * keys[i]![kv * d + c]!;
          return dot / Math.sqrt(d);
        });
        const max = Math.max(...logits);
        const z = logits.reduce((s, x) => s + Math.exp(x - max), 0);
        logits.forEach((x, i) => {
          expected[i] += Math.exp(x - max) / z / (queryHeads * window);
        });
      }
    }
    expect(scores.length).toBe(10);
    scores.forEach((s, i) => {
      expect(s).toBeCloseTo(expected[i]!, 5);
    });
  });

  it('nothing live gives no scores (no query needed)', () => {
    const observation = attentionObservation([[], []], []);
    expect(entryScores(observation).length).toBe(0);
    expect(sharedLiveCount(observation)).toBe(0);
  });

  it('throws E_STATE when the KV heads hold different live sets', () => {
    const uneven = attentionObservation(
      [
        [0, 1, 2],
        [0, 2],
      ],
      [
        [
          [0.5, 0.5, 0],
          [1, 0, 0],
        ],
      ],
    );
    expectLetheError(() => entryScores(uneven), 'E_STATE', 'observation');
    const moved = attentionObservation(
      [
        [0, 1, 2],
        [0, 1, 3],
      ],
      [
        [
          [0.5, 0.5, 0],
          [1, 0, 0],
        ],
      ],
    );
    expectLetheError(() => entryScores(moved), 'E_STATE', 'observation');
  });

  it('needs an observed query and the attention field', () => {
    const observation = attentionObservation([[0, 1]], [[[0.5, 0.5]]]);
    expectLetheError(
      () => entryScores({ ...observation, window: 0 }),
      'E_ARG',
      'observation.window',
    );
    expectLetheError(
      () => entryScores({ ...observation, attention: undefined }),
      'E_ARG',
      'observation.attention',
    );
    expectLetheError(
      () => entryScores({ ...observation, attention: new Float32Array(3) }),
      'E_SHAPE',
      'observation.attention',
    );
  });
});
