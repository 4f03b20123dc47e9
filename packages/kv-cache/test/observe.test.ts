import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { cacheGeometry, KVCache, NO_NEEDS, type ObservationNeeds } from '../src/index';
import {
  appendTokens,
  gateAt,
  keyAt,
  mulberry32,
  positionOf,
  queryAt,
  randomSubset,
  valueAt,
} from './helpers';
import { ReferenceModel } from './reference-model';

const ALL: ObservationNeeds = {
  attentionWindow: 3,
  accumulatedAttention: true,
  keys: true,
  values: true,
  hidden: false,
};

/** A GQA cache (2 KV heads, 4 query heads) run through prefill, decode and per-head evictions, with its reference model. */
function scenario(): { cache: KVCache; model: ReferenceModel } {
  const layers = 2;
  const kvHeads = 2;
  const queryHeads = 4;
  const headDim = 3;
  const cache = new KVCache({
    geometry: cacheGeometry({ layers, kvHeads, headDim, pageSize: 3 }),
    queryHeads,
    anchors: { sinks: 4, window: 2 }, // sink: position 3 (token 0)
    storeGates: true,
    queryWindow: 4,
    trackAttention: true,
  });
  const model = new ReferenceModel(layers, kvHeads, queryHeads, headDim, 4, 2);
  const random = mulberry32(7);
  const feed = (layer: number, count: number) => {
    const from = model.lengths[layer];
    appendTokens(cache, layer, from, count, true);
    model.append(layer, count);
    model.recordQueries(layer, from, count);
  };
  for (let l = 0; l < layers; l++) feed(l, 9); // prefill
  for (let step = 0; step < 14; step++) {
    for (let l = 0; l < layers; l++) {
      feed(l, 1);
      if (step % 4 === 3) {
        const keep = model.live[l].map((tokens) => randomSubset(random, tokens.length, 5));
        cache.keep(l, { granularity: 'head', keep });
        keep.forEach((indices, h) => {
          model.keep(l, h, indices);
        });
      }
    }
  }
  return { cache, model };
}

describe('observe()', () => {
  it('matches brute-force attention, accumulated attention, provenance and contents', () => {
    const { cache, model } = scenario();
    const { kvHeads, headDim } = cache.geometry;
    const queryHeads = cache.queryHeads;
    for (let l = 0; l < cache.geometry.layers; l++) {
      const hidden = new Float32Array([1, 2, 3]);
      const o = cache.observe(l, ALL, hidden);
      const step = model.lengths[l];
      const maxLive = Math.max(...model.live[l].map((tokens) => tokens.length));
      expect(o.layer).toBe(l);
      expect(o.step).toBe(step);
      expect(o.maxLive).toBe(maxLive);
      expect([o.kvHeads, o.queryHeads, o.headDim]).toEqual([kvHeads, queryHeads, headDim]);
      expect(Array.from(o.liveCounts)).toEqual(model.live[l].map((tokens) => tokens.length));
      expect(o.hidden).toBe(hidden);
      expect(o.window).toBe(3);
      for (let h = 0; h < kvHeads; h++) {
        for (let i = 0; i < maxLive; i++) {
          const at = h * maxLive + i;
          const token = model.live[l][h][i];
          if (token === undefined) {
            expect([
              o.positions[at],
              o.ages[at],
              o.gates![at],
              o.accumulatedAttention![at],
            ]).toEqual([-1, 0, 0, 0]);
            continue;
          }
          expect(o.positions[at]).toBe(positionOf(token));
          expect(o.ages[at]).toBe(step - (token + 1));
          expect(o.gates![at]).toBe(gateAt(l, token, h));
          for (let c = 0; c < headDim; c++) {
            expect(o.keys![at * headDim + c]).toBe(keyAt(l, token, h, c));
            expect(o.values![at * headDim + c]).toBe(valueAt(l, token, h, c));
          }
          expect(o.accumulatedAttention![at]).toBeCloseTo(model.attention[l][h][token], 5);
          expect(o.attentionCounts![at]).toBe(model.counts[l][h][token]);
        }
      }
      for (let w = 0; w < 3; w++) {
        const token = step - 3 + w;
        for (let q = 0; q < queryHeads; q++) {
          for (let c = 0; c < headDim; c++) {
            expect(o.queries![(w * queryHeads + q) * headDim + c]).toBe(queryAt(l, token, q, c));
          }
          const expected = model.attentionRow(l, token, q);
          const head = Math.floor(q / (queryHeads / kvHeads));
          for (let i = 0; i < maxLive; i++) {
            const entry = model.live[l][head][i];
            const probability = entry === undefined ? 0 : (expected.get(entry) ?? 0);
            expect(o.attention![(w * queryHeads + q) * maxLive + i]).toBeCloseTo(probability, 6);
          }
        }
      }
    }
  });

  it('gives zero attention to entries newer than the query and rows that sum to one', () => {
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 2, pageSize: 2 }),
      queryHeads: 2,
      queryWindow: 4,
    });
    appendTokens(cache, 0, 0, 6, true);
    const o = cache.observe(0, { ...NO_NEEDS, attentionWindow: 4 });
    expect(o.window).toBe(4);
    for (let w = 0; w < 4; w++) {
      const token = 2 + w;
      for (let q = 0; q < 2; q++) {
        const row = o.attention!.subarray((w * 2 + q) * 6, (w * 2 + q + 1) * 6);
        for (let j = token + 1; j < 6; j++) expect(row[j]).toBe(0);
        expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
      }
    }
  });

  it('returns fewer queries than asked while fewer were recorded, and none when not asked', () => {
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 2 }),
      queryHeads: 1,
      queryWindow: 4,
    });
    appendTokens(cache, 0, 0, 2, true);
    const partial = cache.observe(0, { ...NO_NEEDS, attentionWindow: 4 });
    expect(partial.window).toBe(2);
    expect(partial.queries!.length).toBe(2 * 2);
    expect(partial.attention!.length).toBe(2 * 2);
    const none = cache.observe(0, NO_NEEDS);
    expect(none.window).toBe(0);
    expect(none.queries).toBeUndefined();
    expect(none.attention).toBeUndefined();
    expect(none.keys).toBeUndefined();
    expect(none.accumulatedAttention).toBeUndefined();
  });

  it('rejects needs the cache cannot serve', () => {
    const cache = new KVCache({
      geometry: cacheGeometry({ layers: 1, kvHeads: 1, headDim: 2 }),
      queryHeads: 1,
      queryWindow: 2,
      storeValues: false,
    });
    appendTokens(cache, 0, 0, 3, true);
    expectLetheError(
      () => cache.observe(0, { ...NO_NEEDS, attentionWindow: 3 }),
      'E_STATE',
      'needs.attentionWindow',
    );
    expectLetheError(
      () => cache.observe(0, { ...NO_NEEDS, attentionWindow: -1 }),
      'E_ARG',
      'needs.attentionWindow',
    );
    expectLetheError(
      () => cache.observe(0, { ...NO_NEEDS, accumulatedAttention: true }),
      'E_STATE',
      'needs.accumulatedAttention',
    );
    expectLetheError(
      () => cache.observe(0, { ...NO_NEEDS, values: true }),
      'E_STATE',
      'needs.values',
    );
    expectLetheError(() => cache.observe(0, { ...NO_NEEDS, hidden: true }), 'E_ARG', 'hidden');
    expectLetheError(() => cache.observe(1, NO_NEEDS), 'E_ARG', 'layer');
  });
});
