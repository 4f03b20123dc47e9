/**
 * Conversions between the 16-bit float encodings (IEEE 754 half and bfloat16, as raw
 * `Uint16Array` bits) and `Float32Array`: how F16 / BF16 safetensors data is read and written.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE 754 half precision bits → float32 (exact: every half is representable). */
export function float16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i]!;
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) out[i] = sign * frac * 2 ** -24;
    else if (exp === 0x1f) out[i] = frac === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
    else out[i] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return out;
}

/** float32 → IEEE half bits, round to nearest even; overflow → ±Inf, NaN stays NaN. */
export function float32ToFloat16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    f32[0] = values[i]!;
    const x = u32[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    const mant = x & 0x7fffff;
    if (exp === 0xff) {
      out[i] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 0x1f) {
      out[i] = sign | 0x7c00;
    } else if (e <= 0) {
      if (e < -10) {
        out[i] = sign;
        continue;
      }
      // Subnormal half: shift the full mantissa (with its implicit 1) into place, round to even.
      const m = mant | 0x800000;
      const shift = 14 - e;
      let half = m >>> shift;
      const rem = m & ((1 << shift) - 1);
      const halfway = 1 << (shift - 1);
      if (rem > halfway || (rem === halfway && half & 1)) half++;
      out[i] = sign | half;
    } else {
      let half = (e << 10) | (mant >>> 13);
      const rem = mant & 0x1fff;
      if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++;
      out[i] = sign | half; // a carry into the exponent is correct rounding (up to Inf)
    }
  }
  return out;
}

/** bfloat16 bits → float32 (exact: bf16 is the top half of a float32). */
export function bfloat16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const view = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) view[i] = bits[i]! << 16;
  return out;
}

/** float32 → bfloat16 bits, round to nearest even; NaN stays NaN. */
export function float32ToBfloat16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    f32[0] = values[i]!;
    const x = u32[0]!;
    if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) {
      out[i] = (x >>> 16) | 0x40;
      continue;
    }
    const rounded = x + 0x7fff + ((x >>> 16) & 1);
    out[i] = (rounded >>> 16) & 0xffff;
  }
  return out;
}
