import { assertInteger, LetheError } from '@lethe/core';
import type { AttentionGate } from '@lethe/kv-cache';
import { tf } from '@lethe/tensor';
import { type GateModuleTensors, gateLogitsGraph, logGatesOfLogits } from './gate-graph';
import { checkGateParameters, type GsaGateParameters } from './gate-parameters';
import { type GateGranularity, gateModuleOf } from './granularity';

/**
 * The GSA gate on tfjs, as the {@link AttentionGate} a model runtime runs in every layer: from a
 * layer's attention input `x` `[B, T, D]`, `log g = log σ(W₂·silu(W₁·x + b₁) + b₂)` as
 * `[B, kvHeads, T]` (a `'layer'` or `'scalar'` gate's one output broadcast to every KV head),
 * with tfjs's stable `logSigmoid` (`−softplus(−s)`), so every value is finite and ≤ 0 for
 * finite inputs.
 *
 * The weights are uploaded once, by the constructor, and kept out of any enclosing `tf.tidy`, so
 * a decode step uploads nothing and {@link GsaGate.logGates} may run inside the caller's tidy
 * (it leaves only its result). {@link GsaGate.dispose} frees them.
 *
 * @example
 * ```ts
 * const gate = new GsaGate(initGateParameters({ layers: 2, hiddenSize: 8, kvHeads: 2 }, 'head'));
 * const logG = tf.tidy(() => gate.logGates(0, tf.randomNormal([1, 5, 8]))); // [1, 2, 5]
 * ```
 */
export class GsaGate implements AttentionGate<tf.Tensor> {
  /** Registry name of the method. */
  readonly name = 'gsa';
  /** How finely the gate scores. */
  readonly granularity: GateGranularity;
  /** Layers it serves. */
  readonly layers: number;
  /** Width of the attention input it takes. */
  readonly hiddenSize: number;
  /** KV heads it gives a gate to. */
  readonly kvHeads: number;
  private readonly modules: readonly GateModuleTensors[];
  private disposed = false;

  /**
   * Uploads the weights (copies of the arrays: later changes to `parameters` do not reach them).
   *
   * @throws LetheError as `checkGateParameters`.
   */
  constructor(parameters: GsaGateParameters) {
    const { granularity, layers, hiddenSize, kvHeads, modules } = checkGateParameters(parameters);
    this.granularity = granularity;
    this.layers = layers;
    this.hiddenSize = hiddenSize;
    this.kvHeads = kvHeads;
    const d = hiddenSize;
    this.modules = modules.map((m) => {
      const outputs = m.b2.length;
      return {
        w1: tf.keep(tf.tensor2d(m.w1.slice(), [d, d], 'float32')),
        b1: tf.keep(tf.tensor1d(m.b1.slice(), 'float32')),
        w2: tf.keep(tf.tensor2d(m.w2.slice(), [outputs, d], 'float32')),
        b2: tf.keep(tf.tensor1d(m.b2.slice(), 'float32')),
      };
    });
  }

  /**
   * The log-gates of the tokens layer `layer` writes.
   *
   * @param attentionInput The layer's attention input (after its input norm), `[B, T, D]`,
   *   float32.
   * @returns `log g`, `[B, kvHeads, T]`, every value ≤ 0; the caller owns (and disposes) it.
   * @throws LetheError `E_STATE` after {@link GsaGate.dispose}; `E_ARG` naming `layer` (not an
   *   integer in [0, layers)); `E_SHAPE` naming `attentionInput` for another shape than
   *   `[B, T, hiddenSize]`; `E_DTYPE` naming it for another dtype than float32.
   */
  logGates(layer: number, attentionInput: tf.Tensor): tf.Tensor {
    if (this.disposed) throw new LetheError('E_STATE', 'the gate was disposed', 'gate');
    assertInteger(layer, 'layer', 0);
    if (layer >= this.layers) {
      throw new LetheError(
        'E_ARG',
        `must be below the gate's ${this.layers} layers, got ${layer}`,
        'layer',
      );
    }
    const { shape, dtype } = attentionInput;
    if (shape.length !== 3 || shape[2] !== this.hiddenSize) {
      throw new LetheError(
        'E_SHAPE',
        `must be [B, T, ${this.hiddenSize}], got [${shape.join(', ')}]`,
        'attentionInput',
      );
    }
    if (dtype !== 'float32') {
      throw new LetheError('E_DTYPE', `must be float32, got ${dtype}`, 'attentionInput');
    }
    const module = this.modules[gateModuleOf(this.granularity, layer)]!;
    return tf.tidy(() => logGatesOfLogits(gateLogitsGraph(attentionInput, module), this.kvHeads));
  }

  /** Frees the weights; later {@link GsaGate.logGates} calls throw. A second call does nothing. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const m of this.modules) tf.dispose([m.w1, m.b1, m.w2, m.b2]);
  }
}
