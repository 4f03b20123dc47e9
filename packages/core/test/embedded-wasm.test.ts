import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileEmbedded, instantiateEmbedded } from '../src/index';

// (module (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1))))
const ADD = Buffer.from(
  '0061736d0100000001070160027f7f017f030201000707010361646400000a09010700200020016a0b',
  'hex',
).toString('base64');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('embedded WebAssembly', () => {
  it('compiles and instantiates a module from its base64 bytes', () => {
    expect(compileEmbedded(ADD)).toBeInstanceOf(WebAssembly.Module);
    const exports = instantiateEmbedded(ADD) as { add(a: number, b: number): number };
    expect(exports.add(2, 40)).toBe(42);
  });

  it('is absent, not an error, for bytes the runtime does not accept', () => {
    const truncated = Buffer.from(ADD, 'base64').subarray(0, 20).toString('base64');
    expect(compileEmbedded(truncated)).toBeUndefined();
    expect(instantiateEmbedded(truncated)).toBeUndefined();
  });

  it('is absent where compiling is refused (a strict Content Security Policy)', () => {
    vi.spyOn(WebAssembly, 'Module').mockImplementation(function refused() {
      throw new WebAssembly.CompileError('Refused to compile: wasm-unsafe-eval');
    });
    expect(compileEmbedded(ADD)).toBeUndefined();
    expect(instantiateEmbedded(ADD)).toBeUndefined();
  });
});
