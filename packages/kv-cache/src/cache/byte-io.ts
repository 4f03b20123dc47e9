import { LetheError } from '@lethe/core';

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Throws `E_BACKEND` on a big-endian host: the binary formats copy typed arrays as little-endian bytes. */
export function requireLittleEndianHost(): void {
  if (!HOST_IS_LITTLE_ENDIAN) {
    throw new LetheError('E_BACKEND', 'binary cache formats need a little-endian host');
  }
}

/** Bytes of a typed array, without copying. */
function bytesOf(array: Float32Array | Float64Array | Int32Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** Appends little-endian scalars and typed arrays to a growing byte buffer. */
export class ByteWriter {
  private buffer = new Uint8Array(1024);
  private view = new DataView(this.buffer.buffer);
  private size = 0;

  /** Bytes written so far. */
  get length(): number {
    return this.size;
  }

  /** Appends an unsigned 32-bit integer. */
  u32(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.size, value, true);
    this.size += 4;
  }

  /** Appends a signed 32-bit integer. */
  i32(value: number): void {
    this.reserve(4);
    this.view.setInt32(this.size, value, true);
    this.size += 4;
  }

  /** Appends raw bytes. */
  bytes(data: Uint8Array): void {
    this.reserve(data.length);
    this.buffer.set(data, this.size);
    this.size += data.length;
  }

  /** Appends the elements of a typed array (little-endian). */
  array(data: Float32Array | Float64Array | Int32Array): void {
    this.bytes(bytesOf(data));
  }

  /** Overwrites an unsigned 32-bit integer at `offset` (already written). */
  patchU32(offset: number, value: number): void {
    this.view.setUint32(offset, value, true);
  }

  /** The bytes written (a copy of exactly `length` bytes). */
  finish(): Uint8Array {
    return this.buffer.slice(0, this.size);
  }

  private reserve(extra: number): void {
    if (this.size + extra <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.size + extra, this.buffer.length * 2));
    grown.set(this.buffer.subarray(0, this.size));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }
}

/**
 * Reads little-endian scalars and typed arrays from a byte range, checking every read against
 * the end; running past it throws `E_FORMAT` ("truncated").
 */
export class ByteReader {
  private readonly view: DataView;
  private offset: number;

  constructor(
    private readonly data: Uint8Array,
    start: number,
    private readonly end: number,
  ) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    this.offset = start;
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.end - this.offset;
  }

  /** Reads an unsigned 32-bit integer. */
  u32(): number {
    this.need(4);
    const value = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return value;
  }

  /** Reads a signed 32-bit integer. */
  i32(): number {
    this.need(4);
    const value = this.view.getInt32(this.offset, true);
    this.offset += 4;
    return value;
  }

  /** Reads `count` float32 values into a new array. */
  f32Array(count: number): Float32Array {
    return new Float32Array(this.take(count, 4));
  }

  /** Reads `count` float64 values into a new array. */
  f64Array(count: number): Float64Array {
    return new Float64Array(this.take(count, 8));
  }

  /** Reads `count` int32 values into a new array. */
  i32Array(count: number): Int32Array {
    return new Int32Array(this.take(count, 4));
  }

  private take(count: number, width: number): ArrayBuffer {
    this.need(count * width);
    const start = this.data.byteOffset + this.offset;
    this.offset += count * width;
    return this.data.buffer.slice(start, start + count * width) as ArrayBuffer;
  }

  private need(bytes: number): void {
    if (bytes > this.end - this.offset) {
      throw new LetheError(
        'E_FORMAT',
        `truncated: needs ${bytes} more bytes at offset ${this.offset}`,
        'bytes',
      );
    }
  }
}
