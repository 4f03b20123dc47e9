import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cacheGeometry, KVCache } from '../src/index';
import {
  appendTokens,
  gateAt,
  keyAt,
  mulberry32,
  positionOf,
  randomSubset,
  valueAt,
} from './helpers';
import { ReferenceModel } from './reference-model';

interface Config {
  layers: number;
  kvHeads: number;
  group: number;
  headDim: number;
  pageSize: number;
  sinks: number;
  window: number;
  storeGates: boolean;
  storeValues: boolean;
  trackAttention: boolean;
}

type EvictionMode = 'layer' | 'head' | 'blocks-all' | 'blocks-head';

interface Step {
  tokens: number;
  evict: boolean;
  mode: EvictionMode;
  budget: number;
}

const configArb: fc.Arbitrary<Config> = fc.record({
  layers: fc.integer({ min: 1, max: 3 }),
  kvHeads: fc.integer({ min: 1, max: 3 }),
  group: fc.integer({ min: 1, max: 2 }),
  headDim: fc.integer({ min: 1, max: 4 }),
  pageSize: fc.integer({ min: 1, max: 5 }),
  sinks: fc.integer({ min: 0, max: 9 }), // positions are 3 + 2·token: up to tokens 0–2
  window: fc.integer({ min: 0, max: 4 }),
  storeGates: fc.boolean(),
  storeValues: fc.boolean(),
  trackAttention: fc.boolean(),
});

const stepArb: fc.Arbitrary<Step> = fc.record({
  tokens: fc.integer({ min: 1, max: 4 }),
  evict: fc.boolean(),
  mode: fc.constantFrom<EvictionMode>('layer', 'head', 'blocks-all', 'blocks-head'),
  budget: fc.integer({ min: 0, max: 12 }),
});

function makeCache(config: Config): KVCache {
  return new KVCache({
    geometry: cacheGeometry({
      layers: config.layers,
      kvHeads: config.kvHeads,
      headDim: config.headDim,
      pageSize: config.pageSize,
    }),
    queryHeads: config.kvHeads * config.group,
    anchors: { sinks: config.sinks, window: config.window },
    storeGates: config.storeGates,
    storeValues: config.storeValues,
    trackAttention: config.trackAttention,
    queryWindow: 2,
  });
}

function slotBytes(config: Config): number {
  return (
    4 * config.headDim +
    (config.storeValues ? 4 * config.headDim : 0) +
    (config.storeGates ? 4 : 0) +
    8 +
    (config.trackAttention ? 12 : 0)
  );
}

function checkStats(cache: KVCache, model: ReferenceModel, config: Config): void {
  const stats = cache.stats();
  let pages = 0;
  for (let l = 0; l < config.layers; l++) {
    expect(stats.livePerLayer[l]).toBe(model.liveOfLayer(l));
    expect(stats.peakPerLayer[l]).toBe(model.peakPerLayer[l]);
    expect(stats.evictionRounds[l]).toBe(model.rounds[l]);
    for (let h = 0; h < config.kvHeads; h++) {
      expect(stats.livePerHead[l * config.kvHeads + h]).toBe(model.live[l][h].length);
      pages += Math.ceil(model.live[l][h].length / config.pageSize);
    }
  }
  expect(stats.liveTotal).toBe(model.liveTotal());
  expect(stats.peakTotal).toBe(model.peakTotal);
  expect(stats.pagesAllocated).toBe(pages);
  expect(stats.bytesAllocated).toBe(
    pages * (config.pageSize * slotBytes(config) + 2 * 4 * config.headDim),
  );
  expect(stats.bytesLive).toBe(model.liveTotal() * slotBytes(config));
}

/** Checks view(layer) against the model and returns the live token indices per head it showed. */
function checkView(
  cache: KVCache,
  model: ReferenceModel,
  config: Config,
  layer: number,
): number[][] {
  const view = cache.view(layer);
  const { kvHeads, headDim } = config;
  const maxLive = Math.max(...model.live[layer].map((tokens) => tokens.length));
  const positions = new Int32Array(kvHeads * maxLive).fill(-1);
  const keys = new Float32Array(kvHeads * maxLive * headDim);
  const values = new Float32Array(kvHeads * maxLive * headDim);
  const gates = new Float32Array(kvHeads * maxLive);
  model.live[layer].forEach((tokens, h) => {
    tokens.forEach((token, i) => {
      const at = h * maxLive + i;
      positions[at] = positionOf(token);
      gates[at] = gateAt(layer, token, h);
      for (let c = 0; c < headDim; c++) {
        keys[at * headDim + c] = keyAt(layer, token, h, c);
        values[at * headDim + c] = valueAt(layer, token, h, c);
      }
    });
  });
  expect(view.maxLive).toBe(maxLive);
  expect(Array.from(view.liveCounts)).toEqual(model.live[layer].map((tokens) => tokens.length));
  expect(view.positions).toEqual(positions);
  expect(view.keys).toEqual(keys);
  if (config.storeValues) expect(view.values).toEqual(values);
  else expect(view.values).toBeUndefined();
  if (config.storeGates) expect(view.gates).toEqual(gates);
  else expect(view.gates).toBeUndefined();
  return model.live[layer].map((_, h) =>
    Array.from(
      view.positions.subarray(h * maxLive, h * maxLive + view.liveCounts[h]),
      (p) => (p - 3) / 2,
    ),
  );
}

/** Runs one eviction round on `layer` of both cache and model. */
function evict(
  cache: KVCache,
  model: ReferenceModel,
  config: Config,
  layer: number,
  step: Step,
  random: () => number,
): void {
  let evictedHeads = Array.from({ length: config.kvHeads }, (_, h) => h);
  const headsEqual = model.headsEqual(layer);
  const mode: EvictionMode =
    !headsEqual && step.mode === 'layer'
      ? 'head'
      : !headsEqual && step.mode === 'blocks-all'
        ? 'blocks-head'
        : step.mode;
  if (mode === 'layer') {
    const keep = randomSubset(random, model.live[layer][0].length, step.budget);
    cache.keep(layer, { granularity: 'layer', keep });
    for (let h = 0; h < config.kvHeads; h++) model.keep(layer, h, keep);
  } else if (mode === 'head') {
    const keep = model.live[layer].map((tokens) =>
      randomSubset(random, tokens.length, step.budget),
    );
    cache.keep(layer, { granularity: 'head', keep });
    keep.forEach((indices, h) => {
      model.keep(layer, h, indices);
    });
  } else {
    const blockSize = 1 + Math.floor(random() * 4);
    const head = mode === 'blocks-all' ? 0 : Math.floor(random() * config.kvHeads);
    const live = model.live[layer][head].length;
    const blocks = randomSubset(
      random,
      Math.ceil(live / blockSize),
      Math.floor(step.budget / blockSize),
    );
    const indices = Array.from(blocks).flatMap((b) =>
      Array.from({ length: blockSize }, (_, k) => b * blockSize + k).filter((i) => i < live),
    );
    if (mode === 'blocks-all') {
      cache.keepBlocks(layer, 'all', blocks, blockSize);
      for (let h = 0; h < config.kvHeads; h++) model.keep(layer, h, indices);
    } else {
      cache.keepBlocks(layer, head, blocks, blockSize);
      model.keep(layer, head, indices);
      evictedHeads = [head];
    }
  }
  model.rounds[layer]++;
  const length = model.lengths[layer];
  for (const h of evictedHeads) {
    const tokens = model.live[layer][h];
    expect(tokens.length).toBeLessThanOrEqual(step.budget + config.sinks + config.window);
    for (let j = 0; j < length; j++) {
      if (positionOf(j) < config.sinks || j >= length - config.window) expect(tokens).toContain(j);
    }
  }
}

describe('KVCache against a reference model', () => {
  it('keeps live sets, anchors, contents, stats, attention and replay masks exact', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(stepArb, { minLength: 1, maxLength: 14 }),
        fc.integer(),
        (config, steps, seed) => {
          const random = mulberry32(seed);
          const cache = makeCache(config);
          const model = new ReferenceModel(
            config.layers,
            config.kvHeads,
            config.kvHeads * config.group,
            config.headDim,
            config.sinks,
            config.window,
          );
          // seen[layer][head][token] = token indices the query of `token` saw.
          const seen: number[][][][] = model.live.map((heads) => heads.map(() => []));
          for (const step of steps) {
            for (let l = 0; l < config.layers; l++) {
              const from = model.lengths[l];
              appendTokens(cache, l, from, step.tokens, true);
              model.append(l, step.tokens);
              if (config.trackAttention) model.recordQueries(l, from, step.tokens);
              const shown = checkView(cache, model, config, l);
              for (let t = from; t < from + step.tokens; t++) {
                shown.forEach((tokens, h) => {
                  seen[l][h][t] = tokens.filter((j) => j <= t);
                });
              }
              checkStats(cache, model, config);
            }
            if (!step.evict) continue;
            for (let l = 0; l < config.layers; l++) {
              evict(cache, model, config, l, step, random);
              checkView(cache, model, config, l);
              checkStats(cache, model, config);
            }
          }
          for (let l = 0; l < config.layers; l++) {
            const length = model.lengths[l];
            expect(cache.length(l)).toBe(length);
            for (let h = 0; h < config.kvHeads; h++) {
              const mask = cache.replayMask(l, h);
              expect(mask.length).toBe(length * length);
              for (let i = 0; i < length; i++) {
                const row = Array.from(mask.subarray(i * length, (i + 1) * length));
                const expected = new Array(length).fill(0);
                for (const j of seen[l][h][i]) expected[j] = 1;
                expect(row).toEqual(expected);
              }
            }
            const sameVisibility = model.evictedAt[l].every(
              (row) => row.join(',') === model.evictedAt[l][0].join(','),
            );
            if (sameVisibility) expect(cache.replayMask(l)).toEqual(cache.replayMask(l, 0));
            else expectLetheError(() => cache.replayMask(l), 'E_STATE', 'head');
            if (config.trackAttention) {
              const observation = cache.observe(l, {
                attentionWindow: 0,
                accumulatedAttention: true,
                keys: false,
                values: false,
                hidden: false,
              });
              for (let h = 0; h < config.kvHeads; h++) {
                model.live[l][h].forEach((token, i) => {
                  const at = h * observation.maxLive + i;
                  expect(observation.accumulatedAttention![at]).toBeCloseTo(
                    model.attention[l][h][token],
                    5,
                  );
                  expect(observation.attentionCounts![at]).toBe(model.counts[l][h][token]);
                });
              }
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
