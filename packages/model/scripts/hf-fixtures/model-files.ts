import {
  type FloatStorageDtype,
  fromFloat32,
  Rng,
  type SafetensorsTensor,
  serializeSafetensors,
} from '@lethe/core';
import { checkpointLayout, configToJson, type ModelConfig, parseModelConfig } from '../../src/io';

/** A fixture's file contents by file name. */
export type FixtureFiles = Record<string, Uint8Array>;

/** How a fixture stores its weights. */
export interface WeightStorage {
  readonly dtype: FloatStorageDtype;
  /** 1: `model.safetensors`; n > 1: n shards and `model.safetensors.index.json`. */
  readonly shards: number;
}

const ENCODER = new TextEncoder();

/** `value` as JSON the way transformers writes its files: keys sorted, 2-space indent, newline. */
export function sortedJson(value: unknown): Uint8Array {
  return ENCODER.encode(`${JSON.stringify(sortKeys(value), null, 2)}\n`);
}

/**
 * Random weights for `config`, in the layout of `checkpointLayout`, each tensor from its own
 * Philox stream (`seed`, forked by tensor name): norms 1 ± 0.1, biases ±0.1, the embedding and
 * LM head ±0.5, linear weights ±1/√fan-in, all uniform.
 */
export function randomWeights(config: ModelConfig, seed: number): Record<string, Float32Array> {
  const rng = new Rng(seed);
  const weights: Record<string, Float32Array> = {};
  for (const { name, shape } of checkpointLayout(config)) {
    const count = shape.reduce((a, b) => a * b, 1);
    const uniform = rng.fork(name).uniform(count);
    const [centre, half] = name.endsWith('norm.weight')
      ? [1, 0.1]
      : name.endsWith('.bias')
        ? [0, 0.1]
        : name === 'model.embed_tokens.weight' || name === 'lm_head.weight'
          ? [0, 0.5]
          : [0, 1 / Math.sqrt(shape[1]!)];
    weights[name] = uniform.map((u) => centre + (2 * u - 1) * half);
  }
  return weights;
}

/**
 * `config.json` and the weight files of a checkpoint: one `model.safetensors`, or shards named
 * as transformers names them (`model-00001-of-00002.safetensors`, …) holding consecutive
 * tensors of the layout, and `model.safetensors.index.json` with `total_size` (bytes of tensor
 * data) and the weight map. Safetensors metadata is `{format: "pt"}`, as transformers writes.
 */
export function checkpointFiles(
  rawConfig: Record<string, unknown>,
  weights: Record<string, Float32Array>,
  storage: WeightStorage,
): FixtureFiles {
  const torchDtype = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[storage.dtype];
  const config = parseModelConfig({ ...rawConfig, torch_dtype: torchDtype });
  const layout = checkpointLayout(config);
  const stored: [string, SafetensorsTensor][] = layout.map(({ name, shape }) => [
    name,
    fromFloat32(weights[name]!, shape, storage.dtype, name),
  ]);
  const files: FixtureFiles = { 'config.json': ENCODER.encode(configToJson(config)) };
  if (storage.shards === 1) {
    files['model.safetensors'] = serializeSafetensors(Object.fromEntries(stored), {
      format: 'pt',
    });
    return files;
  }
  const perShard = Math.ceil(stored.length / storage.shards);
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  for (let s = 0; s < storage.shards; s++) {
    const pad = (n: number) => String(n).padStart(5, '0');
    const name = `model-${pad(s + 1)}-of-${pad(storage.shards)}.safetensors`;
    const tensors = stored.slice(s * perShard, (s + 1) * perShard);
    for (const [tensor, { data }] of tensors) {
      weightMap[tensor] = name;
      totalSize += data.byteLength;
    }
    files[name] = serializeSafetensors(Object.fromEntries(tensors), { format: 'pt' });
  }
  files['model.safetensors.index.json'] = sortedJson({
    metadata: { total_size: totalSize },
    weight_map: weightMap,
  });
  return files;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, entry]) => [key, sortKeys(entry)]));
}
