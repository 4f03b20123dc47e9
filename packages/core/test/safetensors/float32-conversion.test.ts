import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromFloat32, toFloat32 } from '../../src/index';
import { bytesOf } from './helpers';

const f16 = (...bits: number[]) =>
  Array.from(toFloat32({ dtype: 'F16', shape: [bits.length], data: Uint16Array.from(bits) }));
const bf16 = (...bits: number[]) =>
  Array.from(toFloat32({ dtype: 'BF16', shape: [bits.length], data: Uint16Array.from(bits) }));
const encode = (dtype: 'F16' | 'BF16', ...values: number[]) =>
  Array.from(
    fromFloat32(Float32Array.from(values), [values.length], dtype, 't').data as Uint16Array,
  );

describe('toFloat32 / fromFloat32 against known half-precision values', () => {
  it('widens F16 bit patterns', () => {
    expect(f16(0x3c00, 0xc000, 0x7bff, 0x0001, 0x0400, 0x3555)).toEqual([
      1,
      -2,
      65504,
      2 ** -24,
      2 ** -14,
      0.333251953125,
    ]);
    expect(f16(0x7c00, 0xfc00)).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    expect(Number.isNaN(f16(0x7e00)[0])).toBe(true);
    expect(Object.is(f16(0x8000)[0], -0)).toBe(true);
  });

  it('widens BF16 bit patterns', () => {
    expect(bf16(0x3f80, 0xc000, 0x4049, 0x7f7f, 0x0001)).toEqual([
      1, -2, 3.140625, 3.3895313892515355e38, 9.183549615799121e-41,
    ]);
    expect(bf16(0x7f80, 0xff80)).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    expect(Number.isNaN(bf16(0x7fc0)[0])).toBe(true);
  });

  it('narrows to F16 and BF16 with round-to-nearest-even', () => {
    expect(encode('F16', 1, -2, 65504, 2 ** -24, 0)).toEqual([0x3c00, 0xc000, 0x7bff, 0x0001, 0]);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
    expect(encode('F16', 1 + 2 ** -11, 1 + 3 * 2 ** -11)).toEqual([0x3c00, 0x3c02]);
    expect(encode('F16', Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)).toEqual([
      0x7c00, 0xfc00,
    ]);
    expect(encode('BF16', 1, -2, 1 + 2 ** -8, 1 + 3 * 2 ** -8)).toEqual([
      0x3f80, 0xc000, 0x3f80, 0x3f82,
    ]);
    const nan = encode('F16', Number.NaN)[0]!;
    expect(nan & 0x7c00).toBe(0x7c00);
    expect(nan & 0x3ff).not.toBe(0);
  });

  it('throws E_ARG naming the tensor when a finite value overflows', () => {
    const error = expectLetheError(() => encode('F16', 1, 65520), 'E_ARG', 't');
    expect(error.message).toContain('element 1');
    expectLetheError(() => encode('BF16', 3.4e38), 'E_ARG', 't');
    expect(encode('F16', 65519)).toEqual([0x7bff]); // rounds down to the largest half
  });

  it('round-trips every F16 bit pattern except NaNs exactly through float32', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const widened = toFloat32({ dtype: 'F16', shape: [65536], data: all });
    const back = fromFloat32(widened, [65536], 'F16', 'all').data as Uint16Array;
    const mismatches: number[] = [];
    for (let i = 0; i < 65536; i++) {
      const isNaNPattern = (i & 0x7c00) === 0x7c00 && (i & 0x3ff) !== 0;
      if (!isNaNPattern && back[i] !== i) mismatches.push(i);
    }
    expect(mismatches).toEqual([]);
  });

  it('keeps F32 data as is (same array) and is bit-exact', () => {
    fc.assert(
      fc.property(fc.float32Array({ maxLength: 32 }), (values) => {
        const tensor = fromFloat32(values, [values.length], 'F32', 't');
        const widened = toFloat32(tensor);
        expect(widened).toBe(values);
        expect(bytesOf(widened)).toEqual(bytesOf(values));
      }),
    );
  });

  it('rounds F64, I32, I64, U8 and BOOL to float32', () => {
    expect(
      Array.from(toFloat32({ dtype: 'F64', shape: [2], data: Float64Array.of(0.1, -1e300) })),
    ).toEqual([Math.fround(0.1), Number.NEGATIVE_INFINITY]);
    expect(
      Array.from(toFloat32({ dtype: 'I32', shape: [2], data: Int32Array.of(-7, 16777217) })),
    ).toEqual([-7, 16777216]);
    expect(
      Array.from(toFloat32({ dtype: 'I64', shape: [2], data: BigInt64Array.of(-5n, 2n ** 62n) })),
    ).toEqual([-5, 2 ** 62]);
    expect(Array.from(toFloat32({ dtype: 'U8', shape: [2], data: Uint8Array.of(0, 255) }))).toEqual(
      [0, 255],
    );
    expect(Array.from(toFloat32({ dtype: 'BOOL', shape: [2], data: Uint8Array.of(1, 0) }))).toEqual(
      [1, 0],
    );
  });

  it('rejects a storage dtype that is not a float', () => {
    expectLetheError(
      () => fromFloat32(new Float32Array(1), [1], 'I32' as 'F32', 't'),
      'E_DTYPE',
      't',
    );
  });
});
