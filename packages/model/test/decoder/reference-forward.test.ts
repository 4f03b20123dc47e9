import { initBackend, tf } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/io/index';
import { lively, maxAbsDiff, randomTokens, tinyConfig } from './helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

type Weights = Record<string, { shape: readonly number[]; data: Float32Array }>;
type Matrix = Float64Array[]; // rows

/**
 * A plain Float64 Llama/Qwen2 forward for one sequence, written from the equations:
 * h = E[x]; per layer: a = RMSNorm(h)·g1; q = a·Wqᵀ + bq, k, v likewise; RoPE with
 * rotate_half on q, k at position p (angle p / θ^(2i/d)); per query head n, KV head n / (Hq/Hkv):
 * softmax_j≤t(q_t·k_j / √d) · v_j; h += concat_heads · Woᵀ; m = RMSNorm(h)·g2;
 * h += (silu(m·Wgᵀ) ⊙ m·Wuᵀ)·Wdᵀ; logits = RMSNorm(h)·g · Wheadᵀ.
 */
function referenceLogits(
  config: ModelConfig,
  weights: Weights,
  tokens: Int32Array,
  positions: number[],
): Matrix {
  const D = config.hidden_size;
  const hd = config.head_dim;
  const Hq = config.num_attention_heads;
  const Hkv = config.num_key_value_heads;
  const w = (name: string) => weights[name]!.data;
  const matVec = (W: Float32Array, x: Float64Array, rows: number, bias?: Float32Array) => {
    const cols = x.length;
    const y = new Float64Array(rows);
    for (let r = 0; r < rows; r++) {
      let s = bias ? bias[r]! : 0;
      for (let c = 0; c < cols; c++) s += W[r * cols + c]! * x[c]!;
      y[r] = s;
    }
    return y;
  };
  const norm = (x: Float64Array, g: Float32Array) => {
    let ms = 0;
    for (const v of x) ms += v * v;
    const inv = 1 / Math.sqrt(ms / x.length + config.rms_norm_eps);
    return x.map((v, i) => v * inv * g[i]!);
  };
  const rope = (x: Float64Array, p: number) => {
    const out = new Float64Array(x.length);
    for (let h = 0; h < x.length / hd; h++) {
      for (let i = 0; i < hd / 2; i++) {
        const angle = p / config.rope_theta ** ((2 * i) / hd);
        const a = x[h * hd + i]!;
        const b = x[h * hd + i + hd / 2]!;
        out[h * hd + i] = a * Math.cos(angle) - b * Math.sin(angle);
        out[h * hd + i + hd / 2] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
    return out;
  };
  const embed = w('model.embed_tokens.weight');
  let hidden: Matrix = Array.from(tokens, (id) =>
    Float64Array.from(embed.subarray(id * D, (id + 1) * D)),
  );
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    const bias = (n: string) =>
      config.attention_bias ? w(`${p}self_attn.${n}_proj.bias`) : undefined;
    const normed = hidden.map((h) => norm(h, w(`${p}input_layernorm.weight`)));
    const q = normed.map((a, t) =>
      rope(matVec(w(`${p}self_attn.q_proj.weight`), a, Hq * hd, bias('q')), positions[t]!),
    );
    const k = normed.map((a, t) =>
      rope(matVec(w(`${p}self_attn.k_proj.weight`), a, Hkv * hd, bias('k')), positions[t]!),
    );
    const v = normed.map((a) => matVec(w(`${p}self_attn.v_proj.weight`), a, Hkv * hd, bias('v')));
    hidden = hidden.map((h, t) => {
      const context = new Float64Array(Hq * hd);
      for (let n = 0; n < Hq; n++) {
        const g = Math.floor(n / (Hq / Hkv));
        const scores = [];
        for (let j = 0; j <= t; j++) {
          let s = 0;
          for (let i = 0; i < hd; i++) s += q[t]![n * hd + i]! * k[j]![g * hd + i]!;
          scores.push(s / Math.sqrt(hd));
        }
        const max = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - max));
        const z = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= t; j++) {
          for (let i = 0; i < hd; i++) context[n * hd + i] += (e[j]! / z) * v[j]![g * hd + i]!;
        }
      }
      const attended = matVec(w(`${p}self_attn.o_proj.weight`), context, D);
      const h1 = h.map((x, i) => x + attended[i]!);
      const m = norm(h1, w(`${p}post_attention_layernorm.weight`));
      const I = config.intermediate_size;
      const gate = matVec(w(`${p}mlp.gate_proj.weight`), m, I);
      const up = matVec(w(`${p}mlp.up_proj.weight`), m, I);
      const act = gate.map((x, i) => (x / (1 + Math.exp(-x))) * up[i]!);
      const down = matVec(w(`${p}mlp.down_proj.weight`), act, D);
      return h1.map((x, i) => x + down[i]!);
    });
  }
  const head = config.tie_word_embeddings ? embed : w('lm_head.weight');
  return hidden.map((h) => matVec(head, norm(h, w('model.norm.weight')), config.vocab_size));
}

describe('parallel forward vs an independent Float64 reference', () => {
  const cases = [
    { name: 'qwen2 (bias), untied, GQA 4/2', config: tinyConfig({ model_type: 'qwen2' }) },
    {
      name: 'llama, tied, GQA 4/1, head_dim 6, θ=500',
      config: tinyConfig({
        tie_word_embeddings: true,
        num_key_value_heads: 1,
        head_dim: 6,
        rope_theta: 500,
      }),
    },
    // long enough for attention to take the split (per-head 2-D matmul) path on wasm
    { name: 'qwen2, long sequence', config: tinyConfig({ model_type: 'qwen2' }), length: 300 },
  ];
  for (const { name, config, length = 9 } of cases) {
    it(`${name}, T=${length}: logits within 1e-4 (default and explicit positions)`, () => {
      const model = lively(config, 7);
      const weights = model.toTensors();
      const tokens = randomTokens(13, length, config.vocab_size);
      const ids = tf.tensor2d(tokens, [1, tokens.length], 'int32');
      const shifted = Array.from(tokens, (_, t) => 5 + 3 * t);
      const positions = tf.tensor2d(shifted, [1, tokens.length], 'int32');
      for (const [pos, options] of [
        [Array.from(tokens, (_, t) => t), {}],
        [shifted, { positions }],
      ] as const) {
        const { logits } = model.forward(ids, options);
        const ours = logits.dataSync();
        logits.dispose();
        const expected = referenceLogits(config, weights, tokens, [...pos]);
        const flat = Float64Array.from(expected.flatMap((row) => [...row]));
        expect(maxAbsDiff(ours, flat)).toBeLessThan(1e-4);
        // the reference is not trivially flat: logits spread over more than 1 nat
        expect(Math.max(...flat) - Math.min(...flat)).toBeGreaterThan(1);
      }
      ids.dispose();
      positions.dispose();
      model.dispose();
    });
  }
});
