import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aggregateBlocks,
  type BlockAggregation,
  expandBlocks,
  selectTopBlocks,
} from '../../src/selection/index';
import { anchorsArbitrary, isAnchored, rowArbitrary } from './helpers';

const modeArbitrary = fc.constantFrom<BlockAggregation>('mean', 'max', 'sum');

function bruteBlocks(scores: Float32Array, blockSize: number, mode: BlockAggregation): number[] {
  const out: number[] = [];
  for (let start = 0; start < scores.length; start += blockSize) {
    const block = [...scores.slice(start, start + blockSize)];
    const sum = block.reduce((a, b) => a + b, 0);
    out.push(mode === 'max' ? Math.max(...block) : mode === 'sum' ? sum : sum / block.length);
  }
  return out;
}

describe('block aggregation', () => {
  it('matches a brute-force reduction of each block', () => {
    fc.assert(
      fc.property(rowArbitrary(), fc.integer({ min: 1, max: 9 }), modeArbitrary, (row, b, mode) => {
        const got = aggregateBlocks(row.scores, b, mode);
        const want = bruteBlocks(row.scores, b, mode);
        expect(got.length).toBe(want.length);
        want.forEach((w, i) => {
          expect(got[i]).toBeCloseTo(w, 5);
        });
      }),
    );
  });

  it('expands blocks to exactly the entries whose block is kept', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        (live, b, picks) => {
          const count = Math.ceil(live / b);
          const blocks = Int32Array.from(
            [...Array(count).keys()].filter((block) => picks[block] === true).reverse(),
          );
          const keptBlocks = new Set(blocks);
          const want = [...Array(live).keys()].filter((i) => keptBlocks.has(Math.floor(i / b)));
          expect([...expandBlocks(blocks, b, live)]).toEqual(want);
        },
      ),
    );
  });

  it('rejects block indices out of range or repeated, and bad block sizes', () => {
    expectLetheError(() => expandBlocks(Int32Array.from([3]), 4, 12), 'E_ARG', 'blocks');
    expectLetheError(() => expandBlocks(Int32Array.from([1, 1]), 4, 12), 'E_ARG', 'blocks');
    expectLetheError(() => aggregateBlocks(new Float32Array(4), 0, 'mean'), 'E_ARG', 'blockSize');
    expectLetheError(
      () => aggregateBlocks(Float32Array.from([Number.NaN]), 2, 'mean'),
      'E_ARG',
      'scores',
    );
  });

  it('keeps anchored blocks, then the best blocks that still fit in k entries', () => {
    fc.assert(
      fc.property(
        rowArbitrary(),
        anchorsArbitrary,
        fc.integer({ min: 0, max: 45 }),
        fc.integer({ min: 1, max: 8 }),
        modeArbitrary,
        (row, anchors, k, b, mode) => {
          const live = row.scores.length;
          const kept = selectTopBlocks(row.scores, row.positions, anchors, k, b, mode);
          // Brute force: anchored blocks, then repeatedly the best remaining block (argmax scan).
          const blockScores = bruteBlocks(row.scores, b, mode);
          const size = (block: number) => Math.min(b, live - block * b);
          const chosen = new Set<number>();
          let total = 0;
          blockScores.forEach((_, block) => {
            for (let i = block * b; i < block * b + size(block); i++) {
              if (isAnchored(row.positions, i, anchors)) {
                chosen.add(block);
                total += size(block);
                return;
              }
            }
          });
          // Then every other block best first (argmax scan), taken only while it fits in k.
          const anchoredTotal = total;
          const tried = new Set(chosen);
          while (tried.size < blockScores.length) {
            let best = -1;
            blockScores.forEach((score, block) => {
              if (!tried.has(block) && (best < 0 || score > blockScores[best])) best = block;
            });
            tried.add(best);
            if (total + size(best) <= k) {
              chosen.add(best);
              total += size(best);
            }
          }
          const want = [...Array(live).keys()].filter((i) => chosen.has(Math.floor(i / b)));
          expect([...kept]).toEqual(want);
          // Never past k unless the anchored blocks alone are; short of k by less than a block.
          expect(kept.length).toBeLessThanOrEqual(Math.max(k, anchoredTotal));
          if (anchoredTotal <= k) expect(kept.length).toBeGreaterThan(Math.min(k, live) - b);
        },
      ),
    );
  });
});
