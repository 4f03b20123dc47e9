/**
 * Weight-decay filter for `AdamWOptions.excludeFromWeightDecay`: true for biases (last
 * dotted segment `bias`) and normalisation weights (a dotted segment containing `norm`, any
 * case), the parameters conventionally trained without decay. Matches Hugging Face
 * Llama/Qwen2 names such as `model.norm.weight`, `model.layers.0.input_layernorm.weight` and
 * `model.layers.0.self_attn.q_proj.bias`.
 *
 * @example
 * ```ts
 * isNormOrBias('model.layers.3.post_attention_layernorm.weight'); // true
 * isNormOrBias('model.layers.3.mlp.up_proj.weight');              // false
 * ```
 */
export function isNormOrBias(name: string): boolean {
  const segments = name.split('.');
  return (
    segments[segments.length - 1] === 'bias' ||
    segments.some((segment) => segment.toLowerCase().includes('norm'))
  );
}
