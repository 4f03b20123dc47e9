import { describe, expect, it } from 'vitest';
import { parseSafetensors, serializeSafetensors } from '../../src/index';
import { fileBytes } from './helpers';

// Byte vectors from the reference implementation's own tests (huggingface/safetensors,
// safetensors/src/tensor.rs: test_serialization, test_empty, test_serialization_forced_alignement).
const REFERENCE_ATTN_0 = [
  64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 46, 48, 34, 58, 123, 34, 100, 116, 121, 112,
  101, 34, 58, 34, 70, 51, 50, 34, 44, 34, 115, 104, 97, 112, 101, 34, 58, 91, 49, 44, 50, 44, 51,
  93, 44, 34, 100, 97, 116, 97, 95, 111, 102, 102, 115, 101, 116, 115, 34, 58, 91, 48, 44, 50, 52,
  93, 125, 125, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64,
];
const REFERENCE_ATTN0_PADDED = [
  72, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 48, 34, 58, 123, 34, 100, 116, 121, 112, 101,
  34, 58, 34, 70, 51, 50, 34, 44, 34, 115, 104, 97, 112, 101, 34, 58, 91, 49, 44, 49, 44, 50, 44,
  51, 93, 44, 34, 100, 97, 116, 97, 95, 111, 102, 102, 115, 101, 116, 115, 34, 58, 91, 48, 44, 50,
  52, 93, 125, 125, 32, 32, 32, 32, 32, 32, 32, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64,
  64, 0, 0, 128, 64, 0, 0, 160, 64,
];
const REFERENCE_EMPTY = [8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32];
const REFERENCE_EMPTY_WITH_METADATA = [
  40, 0, 0, 0, 0, 0, 0, 0, 123, 34, 95, 95, 109, 101, 116, 97, 100, 97, 116, 97, 95, 95, 34, 58,
  123, 34, 102, 114, 97, 109, 101, 119, 111, 114, 107, 34, 58, 34, 112, 116, 34, 125, 125, 32, 32,
  32, 32, 32,
];

const zeroToFive = new Float32Array([0, 1, 2, 3, 4, 5]);

describe('safetensors golden bytes (reference implementation vectors)', () => {
  it('serialises an F32 [1,2,3] tensor exactly as the reference', () => {
    const bytes = serializeSafetensors({
      'attn.0': { dtype: 'F32', shape: [1, 2, 3], data: zeroToFive },
    });
    expect(Array.from(bytes)).toEqual(REFERENCE_ATTN_0);
  });

  it('pads the header with spaces to a multiple of 8 bytes as the reference', () => {
    const bytes = serializeSafetensors({
      attn0: { dtype: 'F32', shape: [1, 1, 2, 3], data: zeroToFive },
    });
    expect(Array.from(bytes)).toEqual(REFERENCE_ATTN0_PADDED);
  });

  it('serialises an empty file with and without metadata as the reference', () => {
    expect(Array.from(serializeSafetensors({}))).toEqual(REFERENCE_EMPTY);
    expect(Array.from(serializeSafetensors({}, { framework: 'pt' }))).toEqual(
      REFERENCE_EMPTY_WITH_METADATA,
    );
  });

  it('parses the reference vectors', () => {
    for (const [vector, name, shape] of [
      [REFERENCE_ATTN_0, 'attn.0', [1, 2, 3]],
      [REFERENCE_ATTN0_PADDED, 'attn0', [1, 1, 2, 3]],
    ] as const) {
      const file = parseSafetensors(Uint8Array.from(vector));
      expect(Object.keys(file.tensors)).toEqual([name]);
      const tensor = file.tensors[name]!;
      expect(tensor.dtype).toBe('F32');
      expect(tensor.shape).toEqual(shape);
      expect(Array.from(tensor.data as Float32Array)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(file.metadata).toBeUndefined();
    }
    expect(parseSafetensors(Uint8Array.from(REFERENCE_EMPTY))).toEqual({
      tensors: {},
      metadata: undefined,
    });
    expect(parseSafetensors(Uint8Array.from(REFERENCE_EMPTY_WITH_METADATA)).metadata).toEqual({
      framework: 'pt',
    });
  });

  it('parses the Python binding vector (I32 zeros, unpadded header of 60 bytes)', () => {
    const header = '{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}';
    const bytes = fileBytes(header, new Array(16).fill(0));
    expect(bytes[0]).toBe(60);
    const file = parseSafetensors(bytes);
    expect(file.tensors.test).toEqual({ dtype: 'I32', shape: [2, 2], data: new Int32Array(4) });
  });
});

describe('safetensors golden bytes (hand-built file with I64, F16, BOOL and metadata)', () => {
  // Header written by hand: 195 characters, padded with 5 spaces to 200 = 0xC8. Order as
  // the reference writer: I64 first, then F16, then BOOL (descending alignment).
  const header =
    '{"__metadata__":{"format":"pt"},' +
    '"b":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},' +
    '"a":{"dtype":"F16","shape":[3],"data_offsets":[8,14]},' +
    '"m":{"dtype":"BOOL","shape":[2],"data_offsets":[14,16]}}     ';
  const data = [
    0xfd,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff, // I64 -3
    0x00,
    0x3c,
    0x00,
    0xc0,
    0xff,
    0x7b, // F16 1, -2, 65504
    0x01,
    0x00, // BOOL true, false
  ];
  const expected = [
    0xc8,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    ...Array.from(header, (c) => c.charCodeAt(0)),
    ...data,
  ];

  it('has the hand-computed layout', () => {
    expect(header.length).toBe(200);
    expect(expected.length).toBe(224);
  });

  it('parses it', () => {
    const file = parseSafetensors(Uint8Array.from(expected));
    expect(file.metadata).toEqual({ format: 'pt' });
    expect(file.tensors.b).toEqual({ dtype: 'I64', shape: [1], data: BigInt64Array.of(-3n) });
    expect(file.tensors.a).toEqual({
      dtype: 'F16',
      shape: [3],
      data: Uint16Array.of(0x3c00, 0xc000, 0x7bff),
    });
    expect(file.tensors.m).toEqual({ dtype: 'BOOL', shape: [2], data: Uint8Array.of(1, 0) });
  });

  it('serialises the same tensors to exactly these bytes, whatever the input key order', () => {
    const bytes = serializeSafetensors(
      {
        m: { dtype: 'BOOL', shape: [2], data: Uint8Array.of(1, 0) },
        a: { dtype: 'F16', shape: [3], data: Uint16Array.of(0x3c00, 0xc000, 0x7bff) },
        b: { dtype: 'I64', shape: [1], data: BigInt64Array.of(-3n) },
      },
      { format: 'pt' },
    );
    expect(Array.from(bytes)).toEqual(expected);
  });
});
