import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { MAX_HEADER_BYTES, parseSafetensors, serializeSafetensors } from '../../src/index';
import { fileBytes } from './helpers';

const entry = (dtype: string, shape: number[], begin: number, end: number) =>
  JSON.stringify({ dtype, shape, data_offsets: [begin, end] });

/** A small valid file with three tensors of different dtypes and metadata. */
function smallFile(): Uint8Array {
  return serializeSafetensors(
    {
      w: { dtype: 'F32', shape: [2, 2], data: Float32Array.of(1, -2, 0.5, 3) },
      h: { dtype: 'F16', shape: [3], data: Uint16Array.of(0x3c00, 0xc000, 1) },
      n: { dtype: 'I64', shape: [], data: BigInt64Array.of(7n) },
    },
    { format: 'pt' },
  );
}

describe('parseSafetensors validation', () => {
  it('throws E_FORMAT (never a partial file) when truncated at every byte boundary', () => {
    const bytes = smallFile();
    expect(() => parseSafetensors(bytes)).not.toThrow();
    for (let length = 0; length < bytes.length; length++) {
      expectLetheError(() => parseSafetensors(bytes.subarray(0, length)), 'E_FORMAT');
    }
  });

  it('throws E_FORMAT when trailing bytes follow the last tensor', () => {
    const bytes = smallFile();
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expectLetheError(() => parseSafetensors(longer), 'E_FORMAT', 'header');
  });

  it('rejects a header length beyond the file or beyond the 100 MB limit', () => {
    const bytes = fileBytes('{}      ');
    bytes[0] = 9;
    expectLetheError(() => parseSafetensors(bytes), 'E_FORMAT', 'header');
    const huge = new Uint8Array(16);
    new DataView(huge.buffer).setBigUint64(0, 2n ** 64n - 1n, true);
    expectLetheError(() => parseSafetensors(huge), 'E_FORMAT', 'header');
    new DataView(huge.buffer).setBigUint64(0, BigInt(MAX_HEADER_BYTES + 1), true);
    expectLetheError(() => parseSafetensors(huge), 'E_FORMAT', 'header');
  });

  it('rejects invalid UTF-8, invalid JSON and non-object headers', () => {
    const badUtf8 = fileBytes('{}');
    badUtf8[8] = 0xff;
    expectLetheError(() => parseSafetensors(badUtf8), 'E_FORMAT', 'header');
    expectLetheError(() => parseSafetensors(fileBytes('{"a":')), 'E_FORMAT', 'header');
    expectLetheError(() => parseSafetensors(fileBytes('[]')), 'E_FORMAT', 'header');
    expectLetheError(() => parseSafetensors(fileBytes('null')), 'E_FORMAT', 'header');
    const nulPadded = fileBytes('{}\0\0');
    expectLetheError(() => parseSafetensors(nulPadded), 'E_FORMAT', 'header');
  });

  it('names the tensor whose entry is malformed', () => {
    const cases: string[] = [
      '{"t":5}',
      '{"t":{"dtype":3,"shape":[1],"data_offsets":[0,4]}}',
      '{"t":{"dtype":"F32","shape":"1","data_offsets":[0,4]}}',
      '{"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}',
      '{"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}',
      '{"t":{"dtype":"F32","shape":[1]}}',
      '{"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}}',
      '{"t":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}',
      '{"t":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}',
      '{"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}',
    ];
    for (const header of cases) {
      expectLetheError(() => parseSafetensors(fileBytes(header, [0, 0, 0, 0])), 'E_FORMAT', 't');
    }
  });

  it('throws E_DTYPE naming the tensor for an unsupported dtype', () => {
    const header = `{"q":${entry('F8_E4M3', [4], 0, 4)}}`;
    const error = expectLetheError(
      () => parseSafetensors(fileBytes(header, [0, 0, 0, 0])),
      'E_DTYPE',
      'q',
    );
    expect(error.message).toContain('F8_E4M3');
  });

  it('throws E_FORMAT when the byte size does not match shape × dtype', () => {
    const header = `{"t":${entry('F32', [2], 0, 4)}}`;
    expectLetheError(() => parseSafetensors(fileBytes(header, [0, 0, 0, 0])), 'E_FORMAT', 't');
  });

  it('detects overlapping tensors, gaps and out-of-bounds offsets', () => {
    const overlap = `{"a":${entry('F32', [2], 0, 8)},"b":${entry('F32', [1], 4, 8)}}`;
    const overlapError = expectLetheError(
      () => parseSafetensors(fileBytes(overlap, new Array(8).fill(0))),
      'E_FORMAT',
      'b',
    );
    expect(overlapError.message).toContain('overlaps');
    const gap = `{"a":${entry('F32', [1], 0, 4)},"b":${entry('F32', [1], 8, 12)}}`;
    const gapError = expectLetheError(
      () => parseSafetensors(fileBytes(gap, new Array(12).fill(0))),
      'E_FORMAT',
      'b',
    );
    expect(gapError.message).toContain('gap');
    const outOfBounds = `{"a":${entry('F32', [2], 0, 8)}}`;
    expectLetheError(() => parseSafetensors(fileBytes(outOfBounds, [0, 0, 0, 0])), 'E_FORMAT', 'a');
  });

  it('rejects BOOL bytes other than 0 and 1', () => {
    const header = `{"m":${entry('BOOL', [2], 0, 2)}}`;
    expectLetheError(() => parseSafetensors(fileBytes(header, [1, 2])), 'E_FORMAT', 'm');
  });

  it('validates __metadata__ as an object of strings', () => {
    expectLetheError(
      () => parseSafetensors(fileBytes('{"__metadata__":{"a":1}}')),
      'E_FORMAT',
      '__metadata__',
    );
    expectLetheError(
      () => parseSafetensors(fileBytes('{"__metadata__":[]}')),
      'E_FORMAT',
      '__metadata__',
    );
  });

  it('rejects input that is not bytes', () => {
    expectLetheError(() => parseSafetensors([1, 2, 3] as unknown as Uint8Array), 'E_ARG', 'bytes');
  });

  it('accepts tensors in any header order, zero-size tensors, and a "__proto__" name', () => {
    const header =
      `{"b":${entry('F32', [1], 4, 8)},"empty":${entry('F32', [0, 3], 4, 4)},` +
      `"__proto__":${entry('U8', [4], 0, 4)}}`;
    const file = parseSafetensors(fileBytes(header, [1, 2, 3, 4, 0, 0, 0x80, 0x3f]));
    expect(Object.keys(file.tensors).sort()).toEqual(['__proto__', 'b', 'empty']);
    expect(Object.getPrototypeOf(file.tensors)).toBe(Object.prototype);
    const proto = Object.getOwnPropertyDescriptor(file.tensors, '__proto__')?.value;
    expect(Array.from(proto.data as Uint8Array)).toEqual([1, 2, 3, 4]);
    expect(Array.from(file.tensors.b!.data as Float32Array)).toEqual([1]);
    expect(file.tensors.empty!.data).toEqual(new Float32Array(0));
  });
});

describe('parseSafetensors data placement', () => {
  // U8 [1] then F32 [1]: the F32 data starts at an odd offset, so it cannot be a view.
  const header = `{"u":${entry('U8', [1], 0, 1)},"f":${entry('F32', [1], 1, 5)}}`;
  const padded = header + ' '.repeat((8 - (header.length % 8)) % 8);
  const bytes = fileBytes(padded, [9, 0, 0, 0x80, 0xbf]);

  it('copies misaligned data and still decodes it', () => {
    const file = parseSafetensors(bytes);
    const f = file.tensors.f!.data as Float32Array;
    expect(Array.from(f)).toEqual([-1]);
    expect(f.buffer).not.toBe(bytes.buffer);
  });

  it('views aligned data by default and copies everything with copy: true', () => {
    const source = smallFile();
    const viewed = parseSafetensors(source);
    const copied = parseSafetensors(source, { copy: true });
    for (const name of ['w', 'h', 'n']) {
      expect(viewed.tensors[name]!.data.buffer).toBe(source.buffer);
      expect(copied.tensors[name]!.data.buffer).not.toBe(source.buffer);
      expect(copied.tensors[name]).toEqual(viewed.tensors[name]);
    }
    const w = viewed.tensors.w!.data as Float32Array;
    const before = w[0];
    source.fill(0, source.length - 40);
    expect(w[0]).not.toBe(before); // a view shares memory with the input
    expect((copied.tensors.w!.data as Float32Array)[0]).toBe(1);
  });

  it('reads from a Node Buffer that is a view into a larger pool', () => {
    const source = smallFile();
    const pool = Buffer.alloc(source.length + 3);
    pool.set(source, 3);
    const file = parseSafetensors(pool.subarray(3));
    expect(Array.from(file.tensors.w!.data as Float32Array)).toEqual([1, -2, 0.5, 3]);
    expect(file.tensors.n!.data).toEqual(BigInt64Array.of(7n));
    const copied = parseSafetensors(pool.subarray(3), { copy: true });
    pool.fill(0);
    expect(Array.from(copied.tensors.w!.data as Float32Array)).toEqual([1, -2, 0.5, 3]);
  });
});
