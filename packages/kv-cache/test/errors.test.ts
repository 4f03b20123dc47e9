import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { cacheGeometry, KVCache, type KVCacheOptions } from '../src/index';
import { appendTokens, smallCache, tokenBatch } from './helpers';

const geometry = { layers: 1, kvHeads: 2, headDim: 2, pageSize: 4 };

describe('bad options', () => {
  it('cacheGeometry fills pageSize 16 and names the bad field', () => {
    expect(cacheGeometry({ layers: 2, kvHeads: 1, headDim: 8 })).toEqual({
      layers: 2,
      kvHeads: 1,
      headDim: 8,
      pageSize: 16,
    });
    expectLetheError(
      () => cacheGeometry({ layers: 0, kvHeads: 1, headDim: 8 }),
      'E_ARG',
      'geometry.layers',
    );
    expectLetheError(
      () => cacheGeometry({ layers: 1, kvHeads: 1.5, headDim: 8 }),
      'E_ARG',
      'geometry.kvHeads',
    );
    expectLetheError(
      () => cacheGeometry({ layers: 1, kvHeads: 1, headDim: Number.NaN }),
      'E_ARG',
      'geometry.headDim',
    );
    expectLetheError(
      () => cacheGeometry({ layers: 1, kvHeads: 1, headDim: 8, pageSize: 0 }),
      'E_ARG',
      'geometry.pageSize',
    );
    expectLetheError(() => cacheGeometry(null as never), 'E_ARG', 'geometry');
  });

  it.each<[Partial<KVCacheOptions>, string]>([
    [{ queryHeads: 3 }, 'queryHeads'],
    [{ queryHeads: 0 }, 'queryHeads'],
    [{ anchors: { sinks: -1, window: 0 } }, 'anchors.sinks'],
    [{ anchors: { sinks: 0, window: 0.5 } }, 'anchors.window'],
    [{ queryWindow: -2 }, 'queryWindow'],
    [{ storeValues: 1 as never }, 'storeValues'],
    [{ trace: 'yes' as never }, 'trace'],
  ])('constructor rejects %o naming %s', (override, argument) => {
    expectLetheError(
      () => new KVCache({ geometry, queryHeads: 2, ...override }),
      'E_ARG',
      argument,
    );
  });
});

describe('bad append / recordQueries input', () => {
  it('names the argument at fault', () => {
    const cache = smallCache({ storeGates: true, layers: 1 });
    const { keys, values, positions, gates } = tokenBatch(cache, 0, 0, 2);
    expectLetheError(() => cache.append(1, keys, values, positions, gates), 'E_ARG', 'layer');
    expectLetheError(() => cache.append(-1, keys, values, positions, gates), 'E_ARG', 'layer');
    expectLetheError(() => cache.append(0.5, keys, values, positions, gates), 'E_ARG', 'layer');
    expectLetheError(
      () => cache.append(0, keys.subarray(1), values, positions, gates),
      'E_SHAPE',
      'keys',
    );
    expectLetheError(
      () => cache.append(0, keys, values.subarray(1), positions, gates),
      'E_SHAPE',
      'values',
    );
    expectLetheError(
      () => cache.append(0, keys, values, positions, gates!.subarray(1)),
      'E_SHAPE',
      'gates',
    );
    expectLetheError(() => cache.append(0, keys, values, positions), 'E_ARG', 'gates');
    expectLetheError(
      () => cache.append(0, Array.from(keys) as never, values, positions, gates),
      'E_DTYPE',
      'keys',
    );
    expectLetheError(
      () => cache.append(0, keys, values, Float32Array.from(positions) as never, gates),
      'E_DTYPE',
      'positions',
    );
    expectLetheError(
      () => cache.append(0, keys, values, new Int32Array([4, 4]), gates),
      'E_ARG',
      'positions',
    );
    expectLetheError(
      () => cache.append(0, keys, values, new Int32Array([5, 4]), gates),
      'E_ARG',
      'positions',
    );
    expectLetheError(
      () => cache.append(0, keys, values, new Int32Array([-1, 4]), gates),
      'E_ARG',
      'positions',
    );
    const nanKeys = keys.slice();
    nanKeys[3] = Number.NaN;
    expectLetheError(() => cache.append(0, nanKeys, values, positions, gates), 'E_ARG', 'keys');
    const infValues = values.slice();
    infValues[0] = Number.POSITIVE_INFINITY;
    expectLetheError(() => cache.append(0, keys, infValues, positions, gates), 'E_ARG', 'values');
    const nanGates = gates!.slice();
    nanGates[1] = Number.NaN;
    expectLetheError(() => cache.append(0, keys, values, positions, nanGates), 'E_ARG', 'gates');
    expect(cache.length(0)).toBe(0); // nothing above was applied

    cache.append(0, keys, values, positions, gates);
    expectLetheError(() => cache.append(0, keys, values, positions, gates), 'E_ARG', 'positions');
  });

  it('rejects gates for a cache that does not store them', () => {
    const cache = smallCache({ layers: 1 });
    const { keys, values, positions } = tokenBatch(cache, 0, 0, 1);
    expectLetheError(
      () => cache.append(0, keys, values, positions, new Float32Array(2)),
      'E_ARG',
      'gates',
    );
  });

  it('recordQueries requires the queries of the tokens just appended, once', () => {
    const cache = smallCache({ layers: 1, queryWindow: 2, headDim: 2 });
    const batch = tokenBatch(cache, 0, 0, 3);
    cache.append(0, batch.keys, batch.values, batch.positions);
    expectLetheError(
      () => cache.recordQueries(0, batch.queries.subarray(1), batch.positions),
      'E_SHAPE',
      'queries',
    );
    expectLetheError(
      () => cache.recordQueries(0, batch.queries.subarray(0, 4), new Int32Array([3])),
      'E_ARG',
      'positions',
    );
    expectLetheError(
      () => cache.recordQueries(0, new Float32Array(4 * 4), new Int32Array([3, 5, 7, 9])),
      'E_ARG',
      'positions',
    );
    const nan = batch.queries.slice();
    nan[0] = Number.NaN;
    expectLetheError(() => cache.recordQueries(0, nan, batch.positions), 'E_ARG', 'queries');
    cache.recordQueries(0, batch.queries, batch.positions);
    expectLetheError(
      () => cache.recordQueries(0, batch.queries.subarray(8), batch.positions.subarray(2)),
      'E_ARG',
      'positions',
    );
  });
});

describe('bad keep decisions', () => {
  function filled(): KVCache {
    const cache = smallCache({ layers: 1 });
    appendTokens(cache, 0, 0, 6);
    return cache;
  }

  it('names decision.keep for bad indices and leaves the cache untouched', () => {
    const cache = filled();
    const before = cache.serialize();
    for (const keep of [[6], [-1], [1, 1], [0.5], [Number.NaN]]) {
      expectLetheError(
        () => cache.keep(0, { granularity: 'layer', keep: keep as never }),
        'E_ARG',
        'decision.keep',
      );
    }
    expectLetheError(
      () =>
        cache.keep(0, { granularity: 'head', keep: [new Int32Array([0]), new Int32Array([9])] }),
      'E_ARG',
      'decision.keep',
    );
    expectLetheError(
      () => cache.keep(0, { granularity: 'head', keep: [new Int32Array([0])] }),
      'E_SHAPE',
      'decision.keep',
    );
    expectLetheError(
      () => cache.keep(0, { granularity: 'token' } as never),
      'E_ARG',
      'decision.granularity',
    );
    expectLetheError(() => cache.keep(0, null as never), 'E_ARG', 'decision');
    expectLetheError(
      () => cache.keep(3, { granularity: 'layer', keep: new Int32Array(0) }),
      'E_ARG',
      'layer',
    );
    expect(cache.serialize()).toEqual(before);
  });

  it('refuses layer-wide decisions once heads hold different entries', () => {
    const cache = filled();
    cache.keep(0, { granularity: 'head', keep: [new Int32Array([0, 1]), new Int32Array([2, 3])] });
    expectLetheError(
      () => cache.keep(0, { granularity: 'layer', keep: new Int32Array([0]) }),
      'E_STATE',
      'decision.granularity',
    );
    expectLetheError(() => cache.keepBlocks(0, 'all', new Int32Array([0]), 2), 'E_STATE', 'head');
    expectLetheError(() => cache.replayMask(0), 'E_STATE', 'head');
    expect(cache.replayMask(0, 1).length).toBe(36);
  });

  it('validates keepBlocks arguments', () => {
    const cache = filled();
    expectLetheError(() => cache.keepBlocks(0, 0, new Int32Array([0]), 0), 'E_ARG', 'blockSize');
    expectLetheError(() => cache.keepBlocks(0, 0, new Int32Array([3]), 2), 'E_ARG', 'blocks');
    expectLetheError(() => cache.keepBlocks(0, 0, new Int32Array([1, 1]), 2), 'E_ARG', 'blocks');
    expectLetheError(() => cache.keepBlocks(0, 2, new Int32Array([0]), 2), 'E_ARG', 'head');
    expectLetheError(() => cache.replayMask(0, 2), 'E_ARG', 'head');
  });

  it('replayMask needs the trace', () => {
    const cache = smallCache({ layers: 1, trace: false });
    appendTokens(cache, 0, 0, 2);
    expectLetheError(() => cache.replayMask(0), 'E_STATE', 'trace');
  });
});
