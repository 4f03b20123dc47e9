import { tf } from '@lethe/tensor';

/** One gate module's weights as tensors (constants at inference, variables in training). */
export interface GateModuleTensors {
  /** `[D, D]`, torch layout `[out, in]`. */
  readonly w1: tf.Tensor2D;
  /** `[D]`. */
  readonly b1: tf.Tensor1D;
  /** `[outputs, D]`. */
  readonly w2: tf.Tensor2D;
  /** `[outputs]`. */
  readonly b2: tf.Tensor1D;
}

/**
 * The gate's logits `s = W₂·silu(W₁·x + b₁) + b₂` of every token of `x` `[B, T, D]`, as
 * `[B, T, outputs]`: the one graph the inference gate and the trainer share (differentiable with
 * respect to the module's tensors). Plain `matMul` + `add`: tfjs-backend-wasm 4.22's fused
 * matMul mis-broadcasts a 1-D bias.
 */
export function gateLogitsGraph(x: tf.Tensor, module: GateModuleTensors): tf.Tensor3D {
  return tf.tidy(() => {
    const [batch, tokens, width] = x.shape as [number, number, number];
    const flat = tf.reshape(x, [batch * tokens, width]);
    const h = tf.add(tf.matMul(flat, module.w1, false, true), module.b1);
    const silu = tf.mul(h, tf.sigmoid(h));
    const s = tf.add(tf.matMul(silu, module.w2, false, true), module.b2);
    return tf.reshape(s, [batch, tokens, module.w2.shape[0]]) as tf.Tensor3D;
  });
}

/**
 * `log σ(s) = −softplus(−s)`, differentiable. Not `tf.logSigmoid`: in tfjs 4.22 its custom
 * gradient reads its input without saving it, so a gradient taken after a `tf.tidy` freed that
 * input fails (on wasm) — softplus's registered gradient keeps what it needs.
 */
export function logSigmoidGraph(s: tf.Tensor): tf.Tensor {
  return tf.tidy(() => tf.neg(tf.softplus(tf.neg(s))));
}

/**
 * `log g` `[B, kvHeads, T]` from the gate's logits `[B, T, outputs]` ({@link logSigmoidGraph}), one
 * output broadcast to every KV head.
 */
export function logGatesOfLogits(logits: tf.Tensor3D, kvHeads: number): tf.Tensor3D {
  return tf.tidy(() => {
    const [batch, tokens, outputs] = logits.shape;
    const logG = tf.transpose(logSigmoidGraph(logits), [0, 2, 1]);
    return (
      outputs === kvHeads ? logG : tf.broadcastTo(logG, [batch, kvHeads, tokens])
    ) as tf.Tensor3D;
  });
}
