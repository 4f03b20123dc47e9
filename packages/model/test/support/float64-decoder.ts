import type { ModelConfig } from '../../src/io/index';

/** Checkpoint tensors by HF name (`DecoderModel.toTensors()`). */
export type ReferenceWeights = Readonly<
  Record<string, { readonly shape: readonly number[]; readonly data: Float32Array }>
>;

/**
 * A plain float64 Llama/Qwen2 forward of one sequence, written from the equations (no tfjs, no
 * float32 rounding anywhere but in the weights themselves and the angles `options.angle` gives):
 * h = E[x]; per layer: a = RMSNorm(h)·g1; q = a·Wqᵀ + bq, k, v likewise; RoPE with rotate_half
 * on q, k at position p (angle `p · θ^(−2i/d)` of pair i, by default in float64); per query head n, KV
 * head n / (Hq/Hkv): softmax_{j≤t}(q_t·k_j / √d) · v_j; h += concat_heads · Woᵀ;
 * m = RMSNorm(h)·g2; h += (silu(m·Wgᵀ) ⊙ m·Wuᵀ)·Wdᵀ; logits = RMSNorm(h)·g · Wheadᵀ.
 *
 * @param positions the position of each token (`tokens.length` of them).
 * @param options.angle the rotary angle of pair `i` at `position`; by default the exact
 *   `position · θ^(−2i/d)`.
 * @param options.from the first token whose logits are wanted (0 by default): the last layer
 *   runs only from there on.
 * @returns the logits of the tokens from `from` on, `[T − from][V]`.
 */
export function float64Logits(
  config: ModelConfig,
  weights: ReferenceWeights,
  tokens: Int32Array,
  positions: readonly number[],
  options: { angle?: (position: number, i: number) => number; from?: number } = {},
): Float64Array[] {
  const {
    angle = (position, i) => position / config.rope_theta ** ((2 * i) / config.head_dim),
    from = 0,
  } = options;
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
        const cos = Math.cos(angle(p, i));
        const sin = Math.sin(angle(p, i));
        const a = x[h * hd + i]!;
        const b = x[h * hd + i + hd / 2]!;
        out[h * hd + i] = a * cos - b * sin;
        out[h * hd + i + hd / 2] = b * cos + a * sin;
      }
    }
    return out;
  };
  const embed = w('model.embed_tokens.weight');
  const T = tokens.length;
  const scale = 1 / Math.sqrt(hd);
  let hidden = Array.from(tokens, (id) => Float64Array.from(embed.subarray(id * D, (id + 1) * D)));
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    // only the last layer's outputs before `from` go unused
    const first = l === config.num_hidden_layers - 1 ? from : 0;
    const bias = (n: string) =>
      config.attention_bias ? w(`${p}self_attn.${n}_proj.bias`) : undefined;
    const normed = hidden.map((h) => norm(h, w(`${p}input_layernorm.weight`)));
    const q = normed.map((a, t) =>
      rope(matVec(w(`${p}self_attn.q_proj.weight`), a, Hq * hd, bias('q')), positions[t]!),
    );
    // keys and values flat, `[T, Hkv·hd]`
    const k = new Float64Array(T * Hkv * hd);
    const v = new Float64Array(T * Hkv * hd);
    normed.forEach((a, t) => {
      const key = matVec(w(`${p}self_attn.k_proj.weight`), a, Hkv * hd, bias('k'));
      k.set(rope(key, positions[t]!), t * Hkv * hd);
      v.set(matVec(w(`${p}self_attn.v_proj.weight`), a, Hkv * hd, bias('v')), t * Hkv * hd);
    });
    const weightsOf = new Float64Array(T);
    hidden = hidden.slice(first).map((h, row) => {
      const t = first + row;
      const context = new Float64Array(Hq * hd);
      for (let n = 0; n < Hq; n++) {
        const query = q[t]!.subarray(n * hd, (n + 1) * hd);
        const g = Math.floor(n / (Hq / Hkv));
        let max = Number.NEGATIVE_INFINITY;
        for (let j = 0; j <= t; j++) {
          const at = (j * Hkv + g) * hd;
          let s = 0;
          for (let i = 0; i < hd; i++) s += query[i]! * k[at + i]!;
          weightsOf[j] = s * scale;
          max = Math.max(max, s * scale);
        }
        let z = 0;
        for (let j = 0; j <= t; j++) {
          weightsOf[j] = Math.exp(weightsOf[j]! - max);
          z += weightsOf[j]!;
        }
        const out = context.subarray(n * hd, (n + 1) * hd);
        for (let j = 0; j <= t; j++) {
          const at = (j * Hkv + g) * hd;
          const weight = weightsOf[j]! / z;
          for (let i = 0; i < hd; i++) out[i] += weight * v[at + i]!;
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
