import { parseSafetensors, type SafetensorsTensor, serializeSafetensors } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  decodeGsaParameters,
  encodeGsaParameters,
  GSA_TENSORS_FILE,
  gateTensorName,
} from '../../src/gate/gate-safetensors';
import { GATE_GRANULARITIES } from '../../src/gate/granularity';
import { randomGate, SHAPE } from '../fixtures';

const LOCATION = 'dir/gates.safetensors';

/** The tensors of an encoded gate, edited by `edit`, serialised again. */
function edited(
  bytes: Uint8Array,
  edit: (tensors: Record<string, SafetensorsTensor>) => void,
): Uint8Array {
  const { tensors } = parseSafetensors(bytes);
  edit(tensors);
  return serializeSafetensors(tensors);
}

describe('encodeGsaParameters / decodeGsaParameters', () => {
  it('round-trips every granularity bit for bit, with torch tensor names', () => {
    for (const granularity of GATE_GRANULARITIES) {
      const p = randomGate(granularity, 7);
      const { parameters, tensors } = encodeGsaParameters(p);
      expect(parameters).toEqual({ granularity, ...SHAPE, tensors: GSA_TENSORS_FILE });
      const names = Object.keys(parseSafetensors(tensors).tensors).sort();
      const expected =
        granularity === 'scalar'
          ? ['gate.0.bias', 'gate.0.weight', 'gate.2.bias', 'gate.2.weight']
          : [0, 1].flatMap((l) =>
              ['0.bias', '0.weight', '2.bias', '2.weight'].map((n) => `layers.${l}.gate.${n}`),
            );
      expect(names).toEqual(expected);
      const { tensors: _, ...header } = parameters;
      const back = decodeGsaParameters(header, tensors, LOCATION);
      expect(back).toEqual(p);
      back.modules.forEach((m, i) => {
        for (const name of ['w1', 'b1', 'w2', 'b2'] as const) {
          const a = new Uint32Array(m[name].buffer, m[name].byteOffset, m[name].length);
          const original = p.modules[i]![name];
          expect([...a]).toEqual([
            ...new Uint32Array(original.buffer, original.byteOffset, original.length),
          ]);
        }
      });
      expect(encodeGsaParameters(back).tensors).toEqual(tensors);
    }
  });

  it('stores weights [out, in] and biases [out]', () => {
    const { tensors } = encodeGsaParameters(randomGate('head'));
    const file = parseSafetensors(tensors).tensors;
    expect(file[gateTensorName('head', 1, 'w1')]!.shape).toEqual([8, 8]);
    expect(file[gateTensorName('head', 1, 'b1')]!.shape).toEqual([8]);
    expect(file[gateTensorName('head', 1, 'w2')]!.shape).toEqual([2, 8]);
    expect(file[gateTensorName('head', 1, 'b2')]!.shape).toEqual([2]);
    expect(Object.values(file).every((t) => t.dtype === 'F32')).toBe(true);
  });

  it('refuses bytes that are not safetensors, missing or extra tensors, another dtype or shape', () => {
    const { parameters, tensors } = encodeGsaParameters(randomGate('head'));
    const { tensors: _, ...header } = parameters;
    const refuse = (bytes: Uint8Array, fragment: string, as = header) => {
      const error = expectLetheError(
        () => decodeGsaParameters(as, bytes, LOCATION),
        'E_FORMAT',
        LOCATION,
      );
      expect(error.message).toContain(fragment);
    };
    refuse(new Uint8Array(12), 'not a safetensors file');
    refuse(
      edited(tensors, (t) => {
        delete t['layers.1.gate.2.bias'];
      }),
      'lacks tensor "layers.1.gate.2.bias"',
    );
    refuse(
      edited(tensors, (t) => {
        t['layers.2.gate.0.bias'] = t['layers.1.gate.0.bias']!;
      }),
      'holds tensor "layers.2.gate.0.bias"',
    );
    refuse(
      edited(tensors, (t) => {
        t['layers.0.gate.0.weight'] = { dtype: 'F64', shape: [8, 8], data: new Float64Array(64) };
      }),
      'tensor "layers.0.gate.0.weight" must be F32 [8, 8], got F64 [8, 8]',
    );
    refuse(
      edited(tensors, (t) => {
        t['layers.0.gate.0.weight'] = { dtype: 'F32', shape: [64], data: new Float32Array(64) };
      }),
      'must be F32 [8, 8], got F32 [64]',
    );
    // A 'head' file read as a 'layer' gate: the second weight has kvHeads rows, not one.
    refuse(tensors, 'tensor "layers.0.gate.2.weight" must be F32 [1, 8], got F32 [2, 8]', {
      ...header,
      granularity: 'layer',
    });
    refuse(tensors, 'lacks tensor "gate.0.weight"', { ...header, granularity: 'scalar' });
    refuse(tensors, 'lacks tensor "layers.2.gate.0.weight"', { ...header, layers: 3 });
    refuse(tensors, 'holds tensor "layers.1.gate.0.bias"', { ...header, layers: 1 });
  });

  it('names the tensor holding a NaN or ±∞', () => {
    const { parameters, tensors } = encodeGsaParameters(randomGate('layer'));
    const { tensors: _, ...header } = parameters;
    const bad = edited(tensors, (t) => {
      (t['layers.1.gate.0.weight']!.data as Float32Array)[3] = Number.NaN;
    });
    const error = expectLetheError(
      () => decodeGsaParameters(header, bad, LOCATION),
      'E_ARG',
      'layers.1.gate.0.weight',
    );
    expect(error.message).toContain('value 3 is NaN');
    expect(error.message).toContain(LOCATION);
  });

  it('refuses a bad header and bad parameters', () => {
    const { parameters, tensors } = encodeGsaParameters(randomGate('head'));
    const { tensors: _, ...header } = parameters;
    expectLetheError(
      () => decodeGsaParameters({ ...header, granularity: 'token' as 'head' }, tensors, LOCATION),
      'E_ARG',
      'granularity',
    );
    expectLetheError(
      () => decodeGsaParameters({ ...header, kvHeads: 0 }, tensors, LOCATION),
      'E_ARG',
      'kvHeads',
    );
    const p = randomGate('head');
    expectLetheError(
      () => encodeGsaParameters({ ...p, modules: p.modules.slice(1) }),
      'E_SHAPE',
      'modules',
    );
  });
});
