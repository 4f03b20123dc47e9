import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { checkKeyBias } from './forward-checks';
import type { KeyBiasHook } from './types';

/**
 * One key-bias hook for a batch whose sequences bring their own gate hooks, or none: the hook of
 * `hooks[b]` computes row `b` of the bias. Each distinct hook runs once per layer, on the rows of
 * the sequences that share it (gathered from the attention input); a sequence without a hook gets
 * 0, no bias (its cache stores no gates). When every sequence has the same hook, that hook is
 * returned as is.
 *
 * @param hooks one hook per sequence (undefined: no gate), at least one defined.
 * @param kvHeads KV heads per layer (the bias is `[B, kvHeads, T]`).
 * @returns a hook giving `[B, kvHeads, T]`; the rows of `hooks[b]`'s output are checked as
 *   `[n | 1, kvHeads | 1, T]` for its `n` sequences (`E_SHAPE` naming `keyBias[b](layer)`), and a
 *   hook returning nothing is `E_STATE` naming `keyBias[b]` (a gated cache needs a gate for every
 *   key).
 */
export function composeKeyBias(
  hooks: readonly (KeyBiasHook | undefined)[],
  kvHeads: number,
): KeyBiasHook {
  const first = hooks[0];
  if (first !== undefined && hooks.every((hook) => hook === first)) return first;
  const groups = new Map<KeyBiasHook, number[]>();
  const ungated: number[] = [];
  hooks.forEach((hook, b) => {
    if (hook === undefined) ungated.push(b);
    else groups.set(hook, [...(groups.get(hook) ?? []), b]);
  });
  return (layer, input) => {
    const [, width] = input.shape as [number, number, number];
    const order: number[] = [];
    const parts: tf.Tensor[] = [];
    for (const [hook, rows] of groups) {
      const bias = hook(layer, tf.gather(input, tf.tensor1d(rows, 'int32')));
      const argument = `keyBias[${rows[0]}]`;
      if (bias === undefined) {
        throw new LetheError(
          'E_STATE',
          `returned nothing for layer ${layer}; a gated cache needs a gate for every key`,
          argument,
        );
      }
      checkKeyBias(bias, rows.length, kvHeads, width, `${argument}(${layer})`);
      parts.push(tf.broadcastTo(bias, [rows.length, kvHeads, width]));
      order.push(...rows);
    }
    if (ungated.length > 0) {
      parts.push(tf.zeros([ungated.length, kvHeads, width]));
      order.push(...ungated);
    }
    const inverse = new Int32Array(order.length);
    order.forEach((b, i) => {
      inverse[b] = i;
    });
    return tf.gather(tf.concat(parts), tf.tensor1d(inverse, 'int32'));
  };
}
