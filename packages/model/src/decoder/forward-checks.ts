import { LetheError } from '@lethe/core';
import type { LayerControls } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import type { ModelConfig } from '../io/index';
import { checkObject } from '../option-checks';
import { checkAttentionMemory } from './attention-memory';
import type { ForwardOptions } from './types';

/** Throws `E_ARG` naming `argument` unless every id is an integer in `[0, vocab)`. */
export function checkTokenIds(ids: ArrayLike<number>, vocab: number, argument: string): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new LetheError(
        'E_ARG',
        `token id ${id} at index ${i} is outside [0, ${vocab})`,
        argument,
      );
    }
  }
}

/** Throws `E_SHAPE` unless `tensor.shape` matches `expected`, where `null` matches any size and
 *  a dimension listed with `broadcast` may also be 1. */
export function checkShape(
  tensor: tf.Tensor,
  expected: readonly number[],
  argument: string,
  broadcast: readonly boolean[] = [],
): void {
  const ok =
    tensor.shape.length === expected.length &&
    tensor.shape.every((dim, i) => dim === expected[i] || (broadcast[i] === true && dim === 1));
  if (!ok) {
    const want = expected.map((d, i) => (broadcast[i] ? `${d}|1` : String(d))).join(', ');
    throw new LetheError(
      'E_SHAPE',
      `expected [${want}], got [${tensor.shape.join(', ')}]`,
      argument,
    );
  }
}

/** Throws `E_SHAPE` unless a per-layer list has one entry per layer. */
export function checkPerLayer(list: readonly unknown[], layers: number, argument: string): void {
  if (!Array.isArray(list) || list.length !== layers) {
    throw new LetheError('E_SHAPE', `expected one entry per layer (${layers})`, argument);
  }
}

/**
 * Validates the inputs of the parallel forward: int32 `[B, T]` ids inside the vocabulary (read
 * back from the device once) whose attention fits the backend's memory (see
 * {@link checkAttentionMemory}), positions, masks, key biases and controls.
 */
export function checkForwardInputs(
  config: ModelConfig,
  inputIds: tf.Tensor,
  options: ForwardOptions,
): void {
  if (!(inputIds instanceof tf.Tensor)) {
    throw new LetheError('E_ARG', 'must be an int32 [B, T] tf.Tensor', 'inputIds');
  }
  checkObject(options, 'options');
  if (inputIds.rank !== 2 || inputIds.dtype !== 'int32') {
    throw new LetheError(
      'E_SHAPE',
      `must be an int32 [B, T] tensor, got ${inputIds.dtype} [${inputIds.shape}]`,
      'inputIds',
    );
  }
  const [batch, length] = inputIds.shape as [number, number];
  if (batch === 0 || length === 0) throw new LetheError('E_SHAPE', 'must not be empty', 'inputIds');
  if (options.positions === undefined && length > config.max_position_embeddings) {
    throw new LetheError(
      'E_SHAPE',
      `has ${length} positions, past the model's context of ${config.max_position_embeddings} (max_position_embeddings)`,
      'inputIds',
    );
  }
  const layers = config.num_hidden_layers;
  checkAttentionMemory(
    {
      batch,
      queryHeads: config.num_attention_heads,
      queries: length,
      keys: length,
      layers,
      vocab: config.vocab_size,
      hidden: config.hidden_size,
      intermediate: config.intermediate_size,
    },
    'inputIds',
    options.capture?.attention === true,
  );
  checkTokenIds(inputIds.dataSync(), config.vocab_size, 'inputIds');
  const kvHeads = config.num_key_value_heads;
  if (options.positions !== undefined) {
    checkShape(options.positions, [batch, length], 'positions');
    if (options.positions.dtype !== 'int32')
      throw new LetheError('E_DTYPE', 'must be int32', 'positions');
  }
  if (options.masks !== undefined && typeof options.masks !== 'function') {
    checkPerLayer(options.masks, layers, 'masks');
    options.masks.forEach((mask, l) => {
      if (mask !== undefined) {
        checkShape(mask, [batch, kvHeads, length, length], `masks[${l}]`, [true, true]);
      }
    });
  }
  if (Array.isArray(options.keyBias)) {
    checkPerLayer(options.keyBias, layers, 'keyBias');
    options.keyBias.forEach((bias: tf.Tensor | undefined, l: number) => {
      if (bias !== undefined) checkKeyBias(bias, batch, kvHeads, length, `keyBias[${l}]`);
    });
  }
  if (options.controls !== undefined) {
    checkPerLayer(options.controls, layers, 'controls');
    options.controls.forEach((c: LayerControls | undefined, l: number) => {
      if (
        c?.attentionBias !== undefined ||
        c?.readPages !== undefined ||
        c?.tokenKeep !== undefined
      ) {
        throw new LetheError(
          'E_ARG',
          'attentionBias / readPages / tokenKeep need a cache; use masks or keyBias in forward',
          `controls[${l}]`,
        );
      }
    });
  }
}

/** Throws `E_SHAPE` unless a key bias is `[B|1, Hkv|1, T]`. */
export function checkKeyBias(
  bias: tf.Tensor,
  batch: number,
  kvHeads: number,
  length: number,
  argument: string,
): void {
  checkShape(bias, [batch, kvHeads, length], argument, [true, true]);
}
