import type { AttentionGate } from '@lethe/kv-cache';
import type { tf } from '@lethe/tensor';
import type { KeyBiasHook } from '../decoder/index';

const hooks = new WeakMap<AttentionGate, KeyBiasHook>();

/**
 * The key-bias hook that runs `gate` (an eviction policy's GSA gate) in every layer of a cached
 * step: `logGates(layer, attentionInput)`. The same gate always gives the same hook, so the
 * sequences of a batch that share a policy share one hook, which the model then runs once on all
 * their rows.
 */
export function gateHook(gate: AttentionGate): KeyBiasHook {
  let hook = hooks.get(gate);
  if (hook === undefined) {
    const tensorGate = gate as AttentionGate<tf.Tensor>;
    hook = (layer, input) => tensorGate.logGates(layer, input);
    hooks.set(gate, hook);
  }
  return hook;
}
