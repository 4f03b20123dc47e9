import { assertInteger, LetheError } from '@lethe/core';
import { parseModelConfig } from '../io/index';
import { DecoderModel } from './decoder-model';
import { initialTensors, layerTensorName } from './weights';

/** The projections that write a layer's two blocks into the residual stream. */
const RESIDUAL_WRITES = ['self_attn.o_proj.weight', 'mlp.down_proj.weight'];

/**
 * A copy of `model` with `layers` decoder layers: its own layers at the bottom, unchanged, and
 * new ones on top that start as the identity — their weights drawn as {@link DecoderModel.random}
 * draws them for the deeper config and `seed`, except the attention output and MLP down
 * projections, which are zero, so neither block adds anything to the residual stream. The copy
 * computes exactly what `model` computes; training then grows the new layers from there (a
 * curriculum that adds depth when a task needs another hop, without losing what was learnt).
 * A new layer's zero projections get a gradient at once; its other matrices get one from the
 * first update on.
 *
 * @example
 * ```ts
 * const deeper = addLayers(model, model.config.num_hidden_layers + 1, 7);
 * ```
 *
 * @param layers the new number of layers, greater than the model's.
 * @param seed seed of the new layers' random matrices.
 * @throws LetheError `E_ARG` naming `layers` when it is not an integer greater than the model's
 *   `num_hidden_layers`; `E_ARG` naming `seed` as {@link DecoderModel.random} does.
 */
export function addLayers(model: DecoderModel, layers: number, seed: number): DecoderModel {
  const old = model.config.num_hidden_layers;
  assertInteger(layers, 'layers', 1);
  if (layers <= old) {
    throw new LetheError('E_ARG', `must be more than the model's ${old}, got ${layers}`, 'layers');
  }
  const config = parseModelConfig({ ...model.config, num_hidden_layers: layers });
  const tensors = { ...initialTensors(config, seed), ...model.toTensors() };
  for (let layer = old; layer < layers; layer++) {
    for (const suffix of RESIDUAL_WRITES) tensors[layerTensorName(layer, suffix)]!.data.fill(0);
  }
  return DecoderModel.fromTensors(config, tensors);
}
