import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
} from '../../src/index';

describe('float16', () => {
  it('decodes known bit patterns', () => {
    const bits = new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0xfc00, 0x0000, 0x8000]);
    const f = float16ToFloat32(bits);
    expect(Array.from(f)).toEqual([1, -2, 65504, 2 ** -24, Infinity, -Infinity, 0, -0]);
    expect(Number.isNaN(float16ToFloat32(new Uint16Array([0x7e00]))[0])).toBe(true);
  });

  it('encodes with round-to-nearest-even and overflow to Inf', () => {
    const f = new Float32Array([
      1,
      -2,
      65504,
      65520,
      2 ** -24,
      2 ** -25,
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
    ]);
    expect(Array.from(float32ToFloat16(f))).toEqual([
      0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x3c00, 0x3c02,
    ]);
  });

  it('round-trips every finite half exactly', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const finite = all.filter((h) => (h & 0x7c00) !== 0x7c00);
    expect(Array.from(float32ToFloat16(float16ToFloat32(finite)))).toEqual(Array.from(finite));
  });
});

describe('bfloat16', () => {
  it('decodes 0x3F80 as 1 and rounds to nearest even', () => {
    expect(bfloat16ToFloat32(new Uint16Array([0x3f80, 0xc000]))[0]).toBe(1);
    const f = new Float32Array([1 + 2 ** -8, 1 + 3 * 2 ** -8]);
    expect(Array.from(float32ToBfloat16(f))).toEqual([0x3f80, 0x3f82]);
  });

  it('round-trips any bf16 value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), (h) => {
        fc.pre((h & 0x7f80) !== 0x7f80);
        const bits = new Uint16Array([h]);
        expect(float32ToBfloat16(bfloat16ToFloat32(bits))[0]).toBe(h);
      }),
    );
  });
});
