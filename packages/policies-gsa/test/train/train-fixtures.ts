import { type CheckpointStore, checkpointLayout, DecoderModel, defaultConfig } from '@lethe/model';
import { Rng } from '@lethe/tensor';
import type { GateGranularity } from '../../src/gate/granularity';
import { initGateParameters } from '../../src/gate/init-gate-parameters';
import { GsaGateVariables } from '../../src/train/gate-variables';

/**
 * A random 2-layer model, hidden 8, 4 query / 2 KV heads, vocabulary 11, with matrices large
 * enough (std 1.5/√fan-in) that attention rows are far from uniform.
 */
export function smallModel(seed = 3): DecoderModel {
  const config = defaultConfig({
    model_type: 'llama',
    vocab_size: 11,
    hidden_size: 8,
    intermediate_size: 16,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
  });
  const rng = new Rng(seed);
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const { name, shape } of checkpointLayout(config)) {
    const noise = rng.fork(name).normal(shape.reduce((a, b) => a * b, 1));
    const data = name.endsWith('norm.weight')
      ? noise.map((z) => 1 + 0.2 * z)
      : noise.map((z) => (1.5 * z) / Math.sqrt(shape[shape.length - 1]!));
    tensors[name] = { shape: [...shape], data };
  }
  return DecoderModel.fromTensors(config, tensors);
}

/** Gate variables for {@link smallModel}, random enough that gates differ between tokens. */
export function smallGate(granularity: GateGranularity = 'head', seed = 5): GsaGateVariables {
  return new GsaGateVariables(
    initGateParameters({ layers: 2, hiddenSize: 8, kvHeads: 2 }, granularity, { seed, scale: 0.9 }),
  );
}

/** A checkpoint store in memory (the last bytes written). */
export function memoryStore(): CheckpointStore & { bytes?: Uint8Array } {
  const store: CheckpointStore & { bytes?: Uint8Array } = {
    read: async () => store.bytes,
    write: async (bytes) => {
      store.bytes = bytes.slice();
    },
  };
  return store;
}
