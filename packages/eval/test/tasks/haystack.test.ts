import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FILLER_SENTENCES,
  fillerUnits,
  fillerWithItems,
  placeNeedle,
  scatterInOrder,
} from '../../src/tasks/haystack';
import { SeededRandom } from '../../src/tasks/seeded';

describe('haystack', () => {
  it('places the needle at the boundary closest to the depth', () => {
    const units = ['aaaa', 'bbbb', 'cccc'];
    expect(placeNeedle(units, 'N', 0)).toEqual({
      text: 'N aaaa bbbb cccc',
      needleStart: 0,
      depth: 0,
    });
    expect(placeNeedle(units, 'N', 1)).toEqual({
      text: 'aaaa bbbb cccc N',
      needleStart: 15,
      depth: 1,
    });
    expect(placeNeedle(units, 'N', 0.5).text).toBe('aaaa N bbbb cccc');
    expect(placeNeedle(units, 'N', 0.6).text).toBe('aaaa bbbb N cccc');
    expect(placeNeedle([], 'N', 0.7)).toEqual({ text: 'N', needleStart: 0, depth: 0 });
  });

  it('keeps every unit and stays within half a unit of the depth (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { maxLength: 30 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (units, depth) => {
          const placed = placeNeedle(units, 'NEEDLE', depth, '\n');
          const parts = placed.text.split('\n');
          expect(parts.filter((p) => p !== 'NEEDLE')).toEqual(units);
          expect(placed.text.slice(placed.needleStart, placed.needleStart + 6)).toBe('NEEDLE');
          const around = placed.text.length - 6;
          if (around > 0) expect(Math.abs(placed.depth - depth) * around).toBeLessThanOrEqual(6.5);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fills up to the length with filler sentences', () => {
    const random = SeededRandom.forExample('filler', 0, 0);
    const units = fillerUnits(random, 500);
    const text = units.join(' ');
    const longest = Math.max(...FILLER_SENTENCES.map((s) => s.length));
    expect(text.length).toBeLessThanOrEqual(500);
    expect(text.length).toBeGreaterThan(500 - longest - 1);
    for (const unit of units) expect(FILLER_SENTENCES).toContain(unit);
    expect(fillerUnits(random, 3)).toEqual([]);
  });

  it('scatters items among units, keeping both orders (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { maxLength: 20 }),
        fc.array(fc.stringMatching(/^[0-9]{1,4}$/), { maxLength: 10 }),
        fc.integer({ min: 0, max: 1000 }),
        (units, items, seed) => {
          const random = SeededRandom.forExample('scatter', seed, 0);
          const mixed = scatterInOrder(random, units, items);
          expect(mixed.filter((x) => /^[a-z]/.test(x))).toEqual(units);
          expect(mixed.filter((x) => /^[0-9]/.test(x))).toEqual(items);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fills a context around items without passing its length', () => {
    const random = SeededRandom.forExample('filler', 1, 0);
    const items = ['the number for bado is 1234.', 'the number for kemi is 5678.'];
    const text = fillerWithItems(random, 300, items);
    expect(text.length).toBeLessThanOrEqual(300);
    expect(text.length).toBeGreaterThan(300 - 27);
    expect(text.indexOf(items[0]!)).toBeLessThan(text.indexOf(items[1]!));
    expect(fillerWithItems(random, 57, items)).toBe(items.join(' '));
  });
});
