import { parseSafetensors, type SafetensorsTensor, serializeSafetensors } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  CONTROLLER_FILE_FORMAT,
  CONTROLLER_TENSOR_NAMES,
  checkControllerInputSize,
  decodeController,
  encodeController,
  SolController,
} from '../src/index';
import { randomEpisodes, randomParameters, SMALL, stepEpisodes } from './fixtures';

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

/** The tensors of an encoded controller, to tamper with. */
const tensorsOf = (bytes: Uint8Array): Record<string, SafetensorsTensor> =>
  parseSafetensors(bytes, { copy: true }).tensors;

/** Asserts `decode` fails with `code` naming the tensors file `file` and, in the message, `tensor`. */
function expectTensorError(
  decode: () => unknown,
  code: string,
  tensor: string,
  file = 'tensors',
): void {
  expect(expectLetheError(decode, code, file).message).toContain(`tensor "${tensor}"`);
}

describe('controller files', () => {
  const parameters = randomParameters(SMALL, 31);
  const encoded = encodeController(parameters);

  it('round-trip bit-identically (through JSON text), and the loaded controller acts the same', () => {
    expect(encoded.config).toEqual({ format: CONTROLLER_FILE_FORMAT, version: 1, ...SMALL });
    const json = JSON.stringify(encoded.config);
    const bytes = encoded.tensors.slice();
    const loaded = decodeController(json, bytes);
    bytes.fill(0); // the loaded arrays are copies
    expect(loaded.config).toEqual(SMALL);
    for (const name of CONTROLLER_TENSOR_NAMES) {
      expect(bits(loaded.tensors[name])).toEqual(bits(parameters.tensors[name]));
    }
    expect(encodeController(loaded).tensors).toEqual(encoded.tensors);
    expect(decodeController(JSON.parse(json), encoded.tensors).config).toEqual(SMALL);
    const batch = randomEpisodes(SMALL, 2, 4, 32);
    expect(stepEpisodes(new SolController(loaded), batch)).toEqual(
      stepEpisodes(new SolController(parameters), batch),
    );
    // the same parameters, the same bytes
    expect(encodeController(randomParameters(SMALL, 31)).tensors).toEqual(encoded.tensors);
  });

  it('refuses a config of another format or version, or that is not JSON (E_FORMAT)', () => {
    const config = encoded.config;
    for (const bad of [
      '{ not json',
      null,
      [],
      { ...config, format: 'lethe-namm' },
      { ...config, version: 2 },
      { ...config, version: undefined },
    ]) {
      expectLetheError(() => decodeController(bad, encoded.tensors), 'E_FORMAT', 'config');
    }
  });

  it('refuses bad sizes in the config naming the field (E_ARG)', () => {
    expectLetheError(
      () => decodeController({ ...encoded.config, heads: 5 }, encoded.tensors),
      'E_ARG',
      'heads',
    );
    expectLetheError(
      () => decodeController({ ...encoded.config, actions: '8' }, encoded.tensors),
      'E_ARG',
      'actions',
    );
  });

  it('refuses bytes that are not safetensors (E_FORMAT naming tensors, or the file given)', () => {
    expectLetheError(
      () => decodeController(encoded.config, encoded.tensors.subarray(0, 20)),
      'E_FORMAT',
      'tensors',
    );
    expectLetheError(
      () => decodeController(encoded.config, encoded.tensors.subarray(0, 20), 'dir/c.safetensors'),
      'E_FORMAT',
      'dir/c.safetensors',
    );
  });

  it('refuses missing, extra, mis-shaped and non-F32 tensors naming the file and them (E_CHECKPOINT)', () => {
    const tensors = tensorsOf(encoded.tensors);
    const { 'block.mlp.down.bias': _, ...missing } = tensors;
    expectTensorError(
      () => decodeController(encoded.config, serializeSafetensors(missing)),
      'E_CHECKPOINT',
      'block.mlp.down.bias',
    );
    const extra = { ...tensors, 'block2.mlp.up.weight': tensors['block.mlp.up.weight']! };
    expectTensorError(
      () => decodeController(encoded.config, serializeSafetensors(extra)),
      'E_CHECKPOINT',
      'block2.mlp.up.weight',
    );
    const transposed = {
      ...tensors,
      'policy_head.weight': { dtype: 'F32', shape: [16, 8], data: new Float32Array(128) },
    } as Record<string, SafetensorsTensor>;
    expectTensorError(
      () => decodeController(encoded.config, serializeSafetensors(transposed)),
      'E_CHECKPOINT',
      'policy_head.weight',
    );
    const half = {
      ...tensors,
      'final_norm.weight': { dtype: 'F16', shape: [16], data: new Uint16Array(16) },
    } as Record<string, SafetensorsTensor>;
    expectTensorError(
      () => decodeController(encoded.config, serializeSafetensors(half)),
      'E_CHECKPOINT',
      'final_norm.weight',
    );
  });

  it('refuses tensors that do not match the config (E_CHECKPOINT naming the first that differs)', () => {
    expectTensorError(
      () => decodeController({ ...encoded.config, width: 32 }, encoded.tensors),
      'E_CHECKPOINT',
      'input.weight',
    );
    expectTensorError(
      () => decodeController({ ...encoded.config, actions: 27 }, encoded.tensors),
      'E_CHECKPOINT',
      'action_embedding.weight',
    );
    expectTensorError(
      () => decodeController({ ...encoded.config, maxHorizon: 64 }, encoded.tensors),
      'E_CHECKPOINT',
      'position_embedding.weight',
    );
  });

  it('refuses a NaN or ±∞ naming the file and the tensor (E_ARG)', () => {
    const tensors = tensorsOf(encoded.tensors);
    const poisoned = (tensors['block.attention.value.weight']!.data as Float32Array).slice();
    poisoned[3] = Number.NaN;
    const bytes = serializeSafetensors({
      ...tensors,
      'block.attention.value.weight': { dtype: 'F32', shape: [16, 16], data: poisoned },
    });
    expectTensorError(
      () => decodeController(encoded.config, bytes),
      'E_ARG',
      'block.attention.value.weight',
    );
  });

  it('checks the input size against the base model (E_CHECKPOINT naming inputSize)', () => {
    expect(() => checkControllerInputSize(SMALL, 8)).not.toThrow();
    expectLetheError(() => checkControllerInputSize(SMALL, 64), 'E_CHECKPOINT', 'inputSize');
  });
});
