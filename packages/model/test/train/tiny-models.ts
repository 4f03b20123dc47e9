import { Rng, tf } from '@lethe/tensor';
import type { NextTokenBatch, SftExample, Trainable } from '../../src/train';
import { crossEntropyLoss } from '../../src/train';

/** Embedding → linear head bigram language model built from plain tf.Variables. */
export interface BigramModel extends Trainable {
  readonly parameters: Map<string, tf.Variable>;
  logits(inputs: tf.Tensor): tf.Tensor3D;
  dispose(): void;
}

/** A bigram model with N(0, 0.5²) weights drawn from `seed`. */
export function bigramModel(seed: number, vocab: number, dim: number): BigramModel {
  const rng = new Rng(seed);
  const make = (shape: number[], std: number): tf.Variable =>
    tf.tidy(() => tf.variable(std === 0 ? tf.zeros(shape) : rng.normalTensor(shape, 0, std)));
  const embed = make([vocab, dim], 0.5);
  const head = make([dim, vocab], 0.5);
  const bias = make([vocab], 0);
  const parameters = new Map([
    ['embed.weight', embed],
    ['head.weight', head],
    ['head.bias', bias],
  ]);
  return {
    parameters,
    logits: (inputs) =>
      tf.tidy(() => {
        const [batch, time] = inputs.shape as [number, number];
        const hidden = tf.gather(embed, tf.reshape(inputs, [batch * time]));
        return tf.reshape(tf.add(tf.matMul(hidden, head), bias), [
          batch,
          time,
          vocab,
        ]) as tf.Tensor3D;
      }),
    dispose: () => {
      for (const v of parameters.values()) v.dispose();
    },
  };
}

/** Next-token loss of a bigram model on a batch. */
export function bigramLoss(model: BigramModel): (batch: NextTokenBatch) => tf.Scalar {
  return (batch) =>
    tf.tidy(() => crossEntropyLoss(model.logits(batch.inputs), batch.targets, batch.mask));
}

/** Windows of length `length` over the cycle 1, 2, …, period (a perfectly learnable bigram task). */
export function cyclicExamples(period: number, length: number): SftExample[] {
  return Array.from({ length: period }, (_, start) => ({
    tokens: Array.from({ length }, (_, t) => 1 + ((start + t) % period)),
  }));
}

/** Host copies of all parameters, by name. */
export function snapshot(model: Trainable): Map<string, Float32Array> {
  return new Map([...model.parameters].map(([name, v]) => [name, Float32Array.from(v.dataSync())]));
}
