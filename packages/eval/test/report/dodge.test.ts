import { describe, expect, it } from 'vitest';
import { dodgeOffsets } from '../../src/report/dodge';

describe('dodgeOffsets', () => {
  it('leaves markers alone that do not touch', () => {
    expect(
      dodgeOffsets(
        [
          { x: 10, y: 10 },
          { x: 20, y: 10 },
          { x: 10, y: 30 },
        ],
        0,
        100,
      ),
    ).toEqual([0, 0, 0]);
  });

  it('spreads coinciding markers side by side around the first, in order', () => {
    const offsets = dodgeOffsets(
      [
        { x: 50, y: 80 },
        { x: 51, y: 79 },
        { x: 50, y: 80 },
        { x: 70, y: 80 },
      ],
      0,
      100,
    );
    expect(offsets).toEqual([-8, 0, 8, 0]);
  });

  it('shifts a group that would leave the plot back inside it', () => {
    const markers = Array.from({ length: 5 }, () => ({ x: 12, y: 40 }));
    const offsets = dodgeOffsets(markers, 10, 100);
    expect(Math.min(...offsets.map((dx) => 12 + dx))).toBe(10);
    expect(new Set(offsets).size).toBe(5);
  });
});
