import { assertInteger, LetheError } from '@lethe/core';
import { type Float32Tensor, parseModelConfig } from '../io/index';
import { DecoderModel } from './decoder-model';
import { initialTensors, layerTensorName } from './weights';

/** The widths a model is widened to; each at least the model's own. */
export interface ModelWidths {
  /** `hidden_size`. */
  readonly hidden: number;
  /** `num_attention_heads` (the head width stays the model's `head_dim`). */
  readonly heads: number;
  /** `num_key_value_heads`; `heads / kvHeads` at least the model's group size. */
  readonly kvHeads: number;
  /** `intermediate_size`. */
  readonly intermediate: number;
}

/**
 * A copy of `model` with wider layers that computes what `model` computes (up to float32
 * rounding): more residual channels, query and KV heads of the same width, MLP units. Every new
 * number is drawn as {@link DecoderModel.random} draws it for the wider config and `seed`, except
 * what would change the output: the new residual channels start at zero (the embedding's new
 * columns and the rows that the attention output and MLP down projections write into them are
 * zero) and the new heads and MLP units write nothing (their columns of those projections are
 * zero). Zero channels would change every RMSNorm's mean square by `hidden / model's hidden`, so
 * the old residual stream is scaled by `c = √(hidden / model's hidden)` (the embedding's and the
 * writers' old entries) and every norm gain divided by `c` — by `c²` for the final norm of a
 * model whose LM head is its embedding. The new heads keep `model`'s grouping: old query head `i`
 * of group size `G` sits at `⌊i / G⌋ · G' + i mod G` under the new group size `G'`, beside its
 * KV head. Training grows the new parts from there: the readers' random columns on the zero
 * channels pass a gradient back into them at once (Net2Net's function-preserving widening,
 * Chen et al. 2016, without its duplicated units, which start symmetric).
 *
 * @example
 * ```ts
 * const wider = widenModel(model, { hidden: 128, heads: 8, kvHeads: 4, intermediate: 256 }, 7);
 * ```
 *
 * @param seed seed of the new entries' random values.
 * @throws LetheError `E_ARG` naming `hidden`, `heads`, `kvHeads` or `intermediate` when it is
 *   not an integer at least the model's, `heads` when its group size `heads / kvHeads` is below
 *   the model's; `E_ARG` naming `seed` as {@link DecoderModel.random} does; an `E_ARG` of
 *   `parseModelConfig` for a wider config it refuses (e.g. `heads` not a multiple of `kvHeads`).
 */
export function widenModel(model: DecoderModel, widths: ModelWidths, seed: number): DecoderModel {
  const old = model.config;
  const fields = [
    ['hidden', old.hidden_size],
    ['heads', old.num_attention_heads],
    ['kvHeads', old.num_key_value_heads],
    ['intermediate', old.intermediate_size],
  ] as const;
  for (const [field, least] of fields) {
    assertInteger(widths[field], field, least);
  }
  const oldGroup = old.num_attention_heads / old.num_key_value_heads;
  const group = widths.heads / widths.kvHeads;
  if (!(group >= oldGroup)) {
    throw new LetheError(
      'E_ARG',
      `heads / kvHeads must be at least the model's group size ${oldGroup}, got ${widths.heads} / ${widths.kvHeads}`,
      'heads',
    );
  }
  const config = parseModelConfig({
    ...old,
    hidden_size: widths.hidden,
    num_attention_heads: widths.heads,
    num_key_value_heads: widths.kvHeads,
    intermediate_size: widths.intermediate,
    head_dim: old.head_dim,
  });
  const scale = Math.sqrt(widths.hidden / old.hidden_size);
  const theirs = model.toTensors();
  const tensors = initialTensors(config, seed);
  const headRow = (head: number) => Math.floor(head / oldGroup) * group + (head % oldGroup);
  const hd = old.head_dim;

  const embedding = 'model.embed_tokens.weight';
  placeOnZeros(tensors[embedding]!, theirs[embedding]!, identity, identity, scale);
  if (!config.tie_word_embeddings) place(tensors['lm_head.weight']!, theirs['lm_head.weight']!);
  setGains(
    tensors['model.norm.weight']!,
    theirs['model.norm.weight']!,
    config.tie_word_embeddings ? scale * scale : scale,
  );
  for (let layer = 0; layer < old.num_hidden_layers; layer++) {
    const name = (suffix: string) => layerTensorName(layer, suffix);
    for (const norm of ['input_layernorm.weight', 'post_attention_layernorm.weight']) {
      setGains(tensors[name(norm)]!, theirs[name(norm)]!, scale);
    }
    const heads = { q: headRow, k: identity, v: identity };
    for (const [proj, headOf] of Object.entries(heads)) {
      const rows = blockRows(hd, headOf);
      place(
        tensors[name(`self_attn.${proj}_proj.weight`)]!,
        theirs[name(`self_attn.${proj}_proj.weight`)]!,
        rows,
      );
      const bias = theirs[name(`self_attn.${proj}_proj.bias`)];
      if (bias !== undefined) place(tensors[name(`self_attn.${proj}_proj.bias`)]!, bias, rows);
    }
    placeOnZeros(
      tensors[name('self_attn.o_proj.weight')]!,
      theirs[name('self_attn.o_proj.weight')]!,
      identity,
      blockRows(hd, headRow),
      scale,
    );
    for (const proj of ['gate_proj', 'up_proj']) {
      place(tensors[name(`mlp.${proj}.weight`)]!, theirs[name(`mlp.${proj}.weight`)]!);
    }
    placeOnZeros(
      tensors[name('mlp.down_proj.weight')]!,
      theirs[name('mlp.down_proj.weight')]!,
      identity,
      identity,
      scale,
    );
  }
  return DecoderModel.fromTensors(config, tensors);
}

/** Where an old row or column index lands in the wider tensor. */
type IndexMap = (index: number) => number;

const identity: IndexMap = (index) => index;

/** The index map of rows grouped in heads of `width`, old head `h` moved to `headOf(h)`. */
function blockRows(width: number, headOf: IndexMap): IndexMap {
  return (index) => headOf(Math.floor(index / width)) * width + (index % width);
}

/** Writes `from` (a vector or `[rows, cols]` matrix) into `into`, each entry times `factor`. */
function place(
  into: Float32Tensor,
  from: Float32Tensor,
  rowOf: IndexMap = identity,
  colOf: IndexMap = identity,
  factor = 1,
): void {
  const [rows, cols = 1] = from.shape;
  const width = into.shape[1] ?? 1;
  for (let r = 0; r < rows!; r++) {
    const target = rowOf(r) * width;
    for (let c = 0; c < cols; c++) {
      into.data[target + colOf(c)] = from.data[r * cols + c]! * factor;
    }
  }
}

/** A norm's gains: the old ones on the old channels, every gain then divided by `divisor`. */
function setGains(into: Float32Tensor, from: Float32Tensor, divisor: number): void {
  place(into, from);
  for (let i = 0; i < into.data.length; i++) into.data[i] = into.data[i]! / divisor;
}

/** {@link place} into a tensor zeroed first: nothing but `from`'s entries is left. */
function placeOnZeros(
  into: Float32Tensor,
  from: Float32Tensor,
  rowOf: IndexMap,
  colOf: IndexMap,
  factor: number,
): void {
  into.data.fill(0);
  place(into, from, rowOf, colOf, factor);
}
