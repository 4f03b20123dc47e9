import { LetheError } from '../errors';
import {
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
} from './float16';
import type { SafetensorsTensor } from './types';

/** The float dtypes {@link fromFloat32} can store float32 values as (a checkpoint's storage dtypes). */
export type FloatStorageDtype = 'F32' | 'F16' | 'BF16';

/**
 * Elements of `tensor` as a `Float32Array`: F16 and BF16 are widened exactly; F64, I32, I64,
 * U8 and BOOL are rounded to the nearest float32 (as `torch.Tensor.float()` does). An F32
 * tensor returns its own `data` array (no copy).
 */
export function toFloat32(tensor: SafetensorsTensor): Float32Array {
  switch (tensor.dtype) {
    case 'F32':
      return tensor.data;
    case 'F16':
      return float16ToFloat32(tensor.data);
    case 'BF16':
      return bfloat16ToFloat32(tensor.data);
    case 'I64':
      return Float32Array.from(tensor.data, (value) => Number(value));
    default:
      return Float32Array.from(tensor.data);
  }
}

/**
 * Encodes float32 values as a tensor of `dtype` (F16/BF16 round to nearest even). A finite
 * value that would overflow to ±Inf in the narrower dtype is an error, not a silent Inf.
 *
 * @param name Tensor name used in error messages.
 * @throws LetheError `E_ARG` on overflow (naming `name` and the element), `E_DTYPE` for a
 *   dtype other than F32/F16/BF16.
 */
export function fromFloat32(
  data: Float32Array,
  shape: readonly number[],
  dtype: FloatStorageDtype,
  name: string,
): SafetensorsTensor {
  switch (dtype) {
    case 'F32':
      return { dtype, shape, data };
    case 'F16':
      return {
        dtype,
        shape,
        data: checkNoOverflow(data, float32ToFloat16(data), 0x7c00, dtype, name),
      };
    case 'BF16':
      return {
        dtype,
        shape,
        data: checkNoOverflow(data, float32ToBfloat16(data), 0x7f80, dtype, name),
      };
    default:
      throw new LetheError('E_DTYPE', `cannot store floats as ${String(dtype)}`, name);
  }
}

function checkNoOverflow(
  source: Float32Array,
  bits: Uint16Array,
  infinityBits: number,
  dtype: FloatStorageDtype,
  name: string,
): Uint16Array {
  for (let i = 0; i < bits.length; i++) {
    if ((bits[i]! & 0x7fff) === infinityBits && Number.isFinite(source[i]!)) {
      throw new LetheError(
        'E_ARG',
        `element ${i} (${source[i]}) overflows ${dtype} to ${source[i]! > 0 ? '+' : '-'}Inf`,
        name,
      );
    }
  }
  return bits;
}
