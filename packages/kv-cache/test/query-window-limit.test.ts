import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkQueryWindow, KVCache, MAX_QUERY_WINDOW_FLOATS, maxQueryWindow } from '../src/index';

/** A one-layer cache of `queryHeads` query heads (one KV head) of width `headDim`. */
const options = (queryHeads: number, headDim: number, queryWindow: number) => ({
  geometry: { layers: 1, kvHeads: 1, headDim },
  queryHeads,
  queryWindow,
});

describe('the query window’s limit', () => {
  it('refuses 1e9 and 1e7 queries with E_ARG naming queryWindow, before allocating', () => {
    for (const queryWindow of [1e9, 1e7]) {
      const error = expectLetheError(
        () => new KVCache(options(2, 2, queryWindow)),
        'E_ARG',
        'queryWindow',
      );
      expect(error.message).toContain(`≤ ${MAX_QUERY_WINDOW_FLOATS / 4}`);
    }
  });

  it('holds exactly maxQueryWindow queries of a shape: one more is refused (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 512 }),
        fc.integer({ min: 1, max: 1000 }),
        (queryHeads, headDim, beyond) => {
          const most = maxQueryWindow(queryHeads, headDim);
          expect(most * queryHeads * headDim).toBeLessThanOrEqual(MAX_QUERY_WINDOW_FLOATS);
          expect((most + 1) * queryHeads * headDim).toBeGreaterThan(MAX_QUERY_WINDOW_FLOATS);
          expect(checkQueryWindow(most, queryHeads, headDim)).toBe(most);
          expectLetheError(
            () => checkQueryWindow(most + beyond, queryHeads, headDim, 'options.window'),
            'E_ARG',
            'options.window',
          );
          expectLetheError(
            () => new KVCache(options(queryHeads, headDim, most + beyond)),
            'E_ARG',
            'queryWindow',
          );
        },
      ),
    );
  });

  it('allocates a window at the limit', () => {
    const most = maxQueryWindow(32, 128);
    expect(most).toBe(4096);
    expect(new KVCache(options(32, 128, most)).queryWindow).toBe(most);
  });
});
