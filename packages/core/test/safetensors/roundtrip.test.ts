import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LetheError,
  parseSafetensors,
  SAFETENSORS_DTYPES,
  type SafetensorsDtype,
  type SafetensorsTensor,
  serializeSafetensors,
} from '../../src/index';
import { decodeLittleEndian, encodeLittleEndian } from '../../src/safetensors/little-endian';
import { bytesOf } from './helpers';

const ELEMENT_BYTES: Record<SafetensorsDtype, number> = {
  BOOL: 1,
  U8: 1,
  F16: 2,
  BF16: 2,
  I32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
};

/** A tensor of `dtype` and `shape` whose raw bytes are arbitrary (any bit pattern, NaNs included). */
function tensorArbitrary(dtype: SafetensorsDtype): fc.Arbitrary<SafetensorsTensor> {
  return fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }).chain((shape) => {
    const count = shape.reduce((a, b) => a * b, 1);
    const byteLength = count * ELEMENT_BYTES[dtype];
    const bytes =
      dtype === 'BOOL'
        ? fc.uint8Array({ min: 0, max: 1, minLength: byteLength, maxLength: byteLength })
        : fc.uint8Array({ minLength: byteLength, maxLength: byteLength });
    return bytes.map((raw) => {
      // decodeLittleEndian is checked against native views in its own test below.
      return { dtype, shape, data: decodeLittleEndian(dtype, raw) } as SafetensorsTensor;
    });
  });
}

const filesArbitrary = fc.record({
  tensors: fc.dictionary(
    fc.string({ unit: 'binary', maxLength: 8 }).filter((name) => name !== '__metadata__'),
    fc.constantFrom(...SAFETENSORS_DTYPES).chain(tensorArbitrary),
    { maxKeys: 6 },
  ),
  metadata: fc.option(fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }), { nil: undefined }),
});

function expectSameTensors(
  actual: Record<string, SafetensorsTensor>,
  expected: Record<string, SafetensorsTensor>,
): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [name, tensor] of Object.entries(expected)) {
    const got = actual[name]!;
    expect(got.dtype).toBe(tensor.dtype);
    expect(got.shape).toEqual(tensor.shape);
    expect(got.data.constructor).toBe(tensor.data.constructor);
    expect(bytesOf(got.data)).toEqual(bytesOf(tensor.data));
  }
}

describe('safetensors round trip (property)', () => {
  it('parse(serialize(x)) returns x bit-exactly', () => {
    fc.assert(
      fc.property(filesArbitrary, ({ tensors, metadata }) => {
        const file = parseSafetensors(serializeSafetensors(tensors, metadata));
        expectSameTensors(file.tensors, tensors);
        expect(file.metadata).toEqual(metadata);
      }),
      { numRuns: 200 },
    );
  });

  it('is deterministic, 8-byte aligned, and re-serialises a parsed file to the same bytes', () => {
    fc.assert(
      fc.property(filesArbitrary, ({ tensors, metadata }) => {
        const bytes = serializeSafetensors(tensors, metadata);
        const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
        expect(headerLength % 8).toBe(0);
        const reversed = Object.fromEntries(Object.entries(tensors).reverse());
        expect(serializeSafetensors(reversed, metadata)).toEqual(bytes);
        const file = parseSafetensors(bytes);
        expect(serializeSafetensors(file.tensors, file.metadata)).toEqual(bytes);
        // The writer orders by alignment, so every tensor is a zero-copy view.
        for (const tensor of Object.values(file.tensors)) {
          expect(tensor.data.buffer).toBe(bytes.buffer);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('on corrupted bytes either parses consistently or throws a LetheError, nothing else', () => {
    fc.assert(
      fc.property(
        filesArbitrary,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        ({ tensors, metadata }, edits) => {
          const bytes = serializeSafetensors(tensors, metadata);
          for (const [position, value] of edits) bytes[position % bytes.length] = value;
          try {
            const file = parseSafetensors(bytes);
            // Whatever parsed must describe the whole file consistently.
            const total = Object.values(file.tensors).reduce((n, t) => n + t.data.byteLength, 0);
            const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
            expect(8 + headerLength + total).toBe(bytes.length);
          } catch (error) {
            expect(error).toBeInstanceOf(LetheError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('serializeSafetensors input checks', () => {
  it('names the tensor with a wrong array type, shape or length', () => {
    const f32 = new Float32Array(4);
    expectLetheError(
      () => serializeSafetensors({ t: { dtype: 'F16', shape: [4], data: f32 } as never }),
      'E_DTYPE',
      't',
    );
    expectLetheError(
      () => serializeSafetensors({ t: { dtype: 'X' as 'F32', shape: [4], data: f32 } }),
      'E_DTYPE',
      't',
    );
    expectLetheError(
      () => serializeSafetensors({ t: { dtype: 'F32', shape: [3], data: f32 } }),
      'E_SHAPE',
      't',
    );
    expectLetheError(
      () => serializeSafetensors({ t: { dtype: 'F32', shape: [-4], data: f32 } }),
      'E_SHAPE',
      't',
    );
    expectLetheError(
      () => serializeSafetensors({ t: { dtype: 'F32', shape: 4 as never, data: f32 } }),
      'E_SHAPE',
      't',
    );
    expectLetheError(
      () => serializeSafetensors({ m: { dtype: 'BOOL', shape: [1], data: Uint8Array.of(2) } }),
      'E_ARG',
      'm',
    );
  });

  it('rejects the reserved name and non-string metadata', () => {
    const tensor = { dtype: 'F32', shape: [0], data: new Float32Array(0) } as const;
    expectLetheError(() => serializeSafetensors({ __metadata__: tensor }), 'E_ARG', '__metadata__');
    expectLetheError(
      () => serializeSafetensors({}, { a: 1 } as unknown as Record<string, string>),
      'E_ARG',
      'metadata',
    );
  });

  it('accepts data that is a view into a larger buffer', () => {
    const backing = new Float32Array([9, 1, 2, 9]);
    const bytes = serializeSafetensors({
      t: { dtype: 'F32', shape: [2], data: backing.subarray(1, 3) },
    });
    expect(Array.from(parseSafetensors(bytes).tensors.t!.data as Float32Array)).toEqual([1, 2]);
  });
});

describe('little-endian codec (the path used on big-endian hosts and for misaligned data)', () => {
  it('decodes like a native little-endian view and encodes back to the same bytes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SAFETENSORS_DTYPES),
        fc.integer({ min: 0, max: 6 }),
        fc.nat({ max: 7 }),
        (dtype, count, misalignment) => {
          const size = ELEMENT_BYTES[dtype];
          const raw = new Uint8Array(count * size + misalignment);
          for (let i = 0; i < raw.length; i++)
            raw[i] = (i * 37 + 11) & (dtype === 'BOOL' ? 1 : 255);
          const bytes = raw.subarray(misalignment);
          const decoded = decodeLittleEndian(dtype, bytes);
          expect(decoded.length).toBe(count);
          expect(bytesOf(decoded)).toEqual(new Uint8Array(bytes)); // host is little-endian
          const out = new Uint8Array(bytes.length);
          encodeLittleEndian({ dtype, shape: [count], data: decoded } as SafetensorsTensor, out);
          expect(out).toEqual(new Uint8Array(bytes));
        },
      ),
    );
  });

  it('keeps float NaN payloads bit-exactly', () => {
    const bytes = Uint8Array.of(0x01, 0x00, 0xc0, 0x7f, 0xff, 0xff, 0xff, 0xff);
    const decoded = decodeLittleEndian('F32', bytes);
    expect(Number.isNaN(decoded[0]) && Number.isNaN(decoded[1])).toBe(true);
    const out = new Uint8Array(8);
    encodeLittleEndian({ dtype: 'F32', shape: [2], data: decoded }, out);
    expect(out).toEqual(bytes);
  });
});
