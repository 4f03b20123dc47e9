import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { type GateModuleTensors, gateLogitsGraph, logGatesOfLogits } from '../gate/gate-graph';
import {
  checkGateParameters,
  type GateModule,
  type GsaGateParameters,
} from '../gate/gate-parameters';
import { gateTensorName } from '../gate/gate-safetensors';
import { type GateGranularity, gateModuleOf } from '../gate/granularity';

const FIELDS = ['w1', 'b1', 'w2', 'b2'] as const;

/**
 * A GSA gate as trainable `tf.Variable`s, named by their safetensors names (`layers.{l}.gate.0.weight`
 * …): a `Trainable` for `@lethe/model`'s `SftTrainer`, so only the gate trains and the backbone
 * stays as it was. {@link GsaGateVariables.logGates} is the same graph as the inference
 * `GsaGate`'s, differentiable; {@link GsaGateVariables.logits} gives the pre-sigmoid scores the
 * gate penalty reads.
 */
export class GsaGateVariables {
  /** Variables by safetensors name (every one trainable). */
  readonly parameters: ReadonlyMap<string, tf.Variable>;
  readonly granularity: GateGranularity;
  readonly layers: number;
  readonly hiddenSize: number;
  readonly kvHeads: number;
  private readonly modules: GateModuleTensors[];

  /**
   * Creates the variables from a gate's values (copied).
   *
   * @throws LetheError as `checkGateParameters`.
   */
  constructor(initial: GsaGateParameters) {
    const { granularity, layers, hiddenSize, kvHeads, modules } = checkGateParameters(initial);
    this.granularity = granularity;
    this.layers = layers;
    this.hiddenSize = hiddenSize;
    this.kvHeads = kvHeads;
    const parameters = new Map<string, tf.Variable>();
    this.modules = modules.map((module, m) => {
      const variable = (field: (typeof FIELDS)[number], shape: number[]) => {
        // tfjs variable names are global: leave them unique, so that gates can coexist.
        const v = tf.tidy(() => tf.variable(tf.tensor(module[field].slice(), shape), true));
        parameters.set(gateTensorName(granularity, m, field), v);
        return v;
      };
      const outputs = module.b2.length;
      return {
        w1: variable('w1', [hiddenSize, hiddenSize]) as tf.Variable<tf.Rank.R2>,
        b1: variable('b1', [hiddenSize]) as tf.Variable<tf.Rank.R1>,
        w2: variable('w2', [outputs, hiddenSize]) as tf.Variable<tf.Rank.R2>,
        b2: variable('b2', [outputs]) as tf.Variable<tf.Rank.R1>,
      };
    });
    this.parameters = parameters;
  }

  /**
   * The gate's logits of layer `layer`'s tokens, `[B, T, outputs]`.
   *
   * @throws LetheError `E_ARG` naming `layer` outside `[0, layers)`.
   */
  logits(layer: number, attentionInput: tf.Tensor): tf.Tensor3D {
    if (!(Number.isInteger(layer) && layer >= 0 && layer < this.layers)) {
      throw new LetheError(
        'E_ARG',
        `must be an integer in [0, ${this.layers}), got ${layer}`,
        'layer',
      );
    }
    return gateLogitsGraph(attentionInput, this.modules[gateModuleOf(this.granularity, layer)]!);
  }

  /** `log g` `[B, kvHeads, T]` of layer `layer`'s tokens (a model's `keyBias` hook). */
  logGates(layer: number, attentionInput: tf.Tensor): tf.Tensor3D {
    return tf.tidy(() => logGatesOfLogits(this.logits(layer, attentionInput), this.kvHeads));
  }

  /** The current values as plain parameters (for `encodeGsaParameters` or a `GsaGate`). */
  snapshot(): GsaGateParameters {
    const values = (t: tf.Tensor) => (t.dataSync() as Float32Array).slice();
    const modules: GateModule[] = this.modules.map((m) => ({
      w1: values(m.w1),
      b1: values(m.b1),
      w2: values(m.w2),
      b2: values(m.b2),
    }));
    const { granularity, layers, hiddenSize, kvHeads } = this;
    return { granularity, layers, hiddenSize, kvHeads, modules };
  }

  /** Frees the variables. */
  dispose(): void {
    for (const v of this.parameters.values()) v.dispose();
  }
}
