import { describe, expect, it } from 'vitest';
import { ZIGGURAT_F, ZIGGURAT_LAYERS, ZIGGURAT_R, ZIGGURAT_V, ZIGGURAT_X } from '../src/ziggurat';
import { normalCdf, normalUpperTail } from './normality';

describe('ziggurat tables (128 layers of area v under exp(−x²/2))', () => {
  it('the reference CDF matches tabulated values of Φ to 1e-14 (and the upper tail relatively)', () => {
    expect(Math.abs(normalCdf(0) - 0.5)).toBeLessThan(1e-15);
    expect(Math.abs(normalCdf(1) - 0.8413447460685429)).toBeLessThan(1e-14);
    expect(Math.abs(normalCdf(-2) - 0.022750131948179195)).toBeLessThan(1e-14);
    expect(Math.abs(normalCdf(3) - 0.9986501019683699)).toBeLessThan(1e-14);
    expect(Math.abs(normalCdf(4.2) - 0.9999866542509841)).toBeLessThan(1e-14);
    for (const [x, q] of [
      [4, 3.167124183311992e-5],
      [5, 2.866515718791939e-7],
      [6, 9.865876450376946e-10],
    ] as const) {
      expect(Math.abs(normalUpperTail(x) / q - 1)).toBeLessThan(1e-10);
    }
  });

  it('r and v agree: the base layer r·f(r) + ∫_r^∞ f equals v', () => {
    const tailArea = Math.sqrt(2 * Math.PI) * normalUpperTail(ZIGGURAT_R);
    const base = ZIGGURAT_R * Math.exp(-0.5 * ZIGGURAT_R ** 2) + tailArea;
    expect(Math.abs(base / ZIGGURAT_V - 1)).toBeLessThan(1e-13);
  });

  it('the layers close: edges decrease to 0 and every layer, the top one included, has area v', () => {
    expect(ZIGGURAT_X.length).toBe(ZIGGURAT_LAYERS + 1);
    expect(ZIGGURAT_X[1]).toBe(ZIGGURAT_R);
    expect(ZIGGURAT_X[ZIGGURAT_LAYERS]).toBe(0);
    expect(ZIGGURAT_F[ZIGGURAT_LAYERS]).toBe(1);
    for (let i = 0; i < ZIGGURAT_LAYERS; i++) {
      expect(ZIGGURAT_X[i + 1]!).toBeLessThan(ZIGGURAT_X[i]!);
      expect(ZIGGURAT_F[i]).toBe(Math.exp(-0.5 * ZIGGURAT_X[i]! ** 2));
    }
    // The base layer is drawn as a rectangle of height f(r) and area v.
    expect(Math.abs((ZIGGURAT_X[0]! * ZIGGURAT_F[1]!) / ZIGGURAT_V - 1)).toBeLessThan(1e-15);
    for (let i = 1; i < ZIGGURAT_LAYERS; i++) {
      const area = ZIGGURAT_X[i]! * (ZIGGURAT_F[i + 1]! - ZIGGURAT_F[i]!);
      expect(Math.abs(area / ZIGGURAT_V - 1), `layer ${i}`).toBeLessThan(1e-12);
    }
    // The total area is 128·v; half the integral of exp(−x²/2) is √(π/2).
    expect(ZIGGURAT_LAYERS * ZIGGURAT_V).toBeGreaterThan(Math.sqrt(Math.PI / 2));
  });
});
