import { describe, expect, it } from 'vitest';
import { ropeInverseFrequencies } from '../../src/decoder/rope';

const f32 = Math.fround;

/**
 * HF's float32 `inv_freq`, transcribed one torch operation at a time from
 * `1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))`: each float32
 * operation is one float64 operation rounded to float32.
 */
function hfInverseFrequencies(dim: number, base: number): number[] {
  const steps: number[] = []; // torch.arange(0, dim, 2, dtype=torch.int64)
  for (let k = 0; k < dim; k += 2) steps.push(k);
  const exponents = steps.map((k) => f32(f32(k) / f32(dim))); // .float() / dim
  const powers = exponents.map((e) => f32(f32(base) ** e)); // base ** (…): base taken as float32
  return powers.map((power) => f32(f32(1) / power)); // 1.0 / (…)
}

/** The float32 next to `y` in the direction of `x` (`y` a positive normal float32, `x ≠ y`). */
function neighbourToward(y: number, x: number): number {
  const bits = new Int32Array(Float32Array.of(y).buffer);
  bits[0]! += x > y ? 1 : -1;
  return new Float32Array(bits.buffer)[0]!;
}

const HEAD_DIMS = [16, 32, 64, 128];
const BASES = [10_000, 1_000_000, 500_000];

describe('ropeInverseFrequencies follows HF float32 recipe', () => {
  for (const dim of HEAD_DIMS) {
    for (const base of BASES) {
      it(`head_dim ${dim}, θ = ${base}: equal to the recipe, bit for bit`, () => {
        expect(Array.from(ropeInverseFrequencies(dim, base))).toEqual(
          hfInverseFrequencies(dim, base),
        );
      });
    }
  }

  it('hand-computed values, three of them an ulp off the correctly rounded θ^(−2i/d)', () => {
    // i = 0: θ⁰ = 1; d = 16, i = 2: 10⁴^0.25 = 10, 1/10 rounds to 13421773·2⁻²⁷
    expect(ropeInverseFrequencies(16, 10_000)[0]).toBe(1);
    expect(ropeInverseFrequencies(16, 10_000)[2]).toBe(13_421_773 * 2 ** -27);
    // d = 16, θ = 10⁴, i = 3: 10⁴^0.375 = 10^1.5 = 31.6227766…, ×2¹⁹ = 16579442.30 → the float32
    // 16579442·2⁻¹⁹; its reciprocal ×2²⁸ = 2⁴⁷/16579442 = 8488674.61 → 8488675·2⁻²⁸ (correctly
    // rounded: 10^−1.5 × 2²⁸ = 8488674.46 → 8488674)
    expect(ropeInverseFrequencies(16, 10_000)[3]).toBe(8_488_675 * 2 ** -28);
    // d = 16, θ = 10⁶, i = 6: 10^4.5 ×2⁹ = 16190861.62 → 16190862·2⁻⁹; 2⁴⁷/16190862 = 8692402.44
    // → 8692402·2⁻³⁸ (correctly rounded: 10^−4.5 × 2³⁸ = 8692402.64 → 8692403)
    expect(ropeInverseFrequencies(16, 1_000_000)[6]).toBe(8_692_402 * 2 ** -38);
    // d = 128, θ = 5·10⁵, i = 32: √500000 ×2¹⁴ = 11585237.503 → 11585238·2⁻¹⁴;
    // its reciprocal ×2³³ = 2⁴⁷/11585238 = 12148001.48 → 12148001·2⁻³³ (correctly rounded:
    // 2³³/√500000 = 12148001.9999 → 12148002)
    expect(ropeInverseFrequencies(128, 500_000)[32]).toBe(12_148_001 * 2 ** -33);
  });

  it('the float32 powers are correctly rounded: none near a half-way point', () => {
    // fround(Math.pow(…)) rounds twice; it can differ from a correctly rounded powf only when the
    // float64 power lies within Math.pow's error (~2⁻⁵² relative) of a point half-way between two
    // float32 values. Every power here is more than 2⁻⁴⁰ (relative) away from one.
    for (const dim of HEAD_DIMS) {
      for (const base of BASES) {
        for (let k = 0; k < dim; k += 2) {
          const power = f32(base) ** f32(k / dim);
          const rounded = f32(power);
          if (rounded === power) continue; // a float32 already: rounding is exact
          const halfway = (rounded + neighbourToward(rounded, power)) / 2;
          expect(
            Math.abs(power - halfway) / power,
            `d ${dim}, θ ${base}, i ${k / 2}`,
          ).toBeGreaterThan(2 ** -40);
        }
      }
    }
  });
});
