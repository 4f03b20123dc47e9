import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';

/**
 * How per-action terms `x[b, t]` (masked by `m[b, t]`) become one number:
 * - `token-mean`: `Σ x·m / Σ m` (DAPO-style, every action weighs the same);
 * - `sequence-mean`: the mean over sequences of each sequence's own token mean (original GRPO,
 *   which favours short sequences; a sequence without actions counts as 0);
 * - `constant` (Dr. GRPO): `Σ x·m / normalizer`, no per-sequence length division. With the
 *   default normalizer, the number of sequences G, this is NGC's eq. 3.
 */
export type LossAggregation = 'token-mean' | 'sequence-mean' | 'constant';

/** Inputs of {@link policyLoss}. */
export interface PolicyLossInputs {
  /** `log π_θ(action)` per action `[B, T]`, on the autograd graph. */
  readonly logProbs: tf.Tensor;
  /**
   * `log π_old(action)` of the policy that sampled the rollouts `[B, T]`. Default: `logProbs`
   * with the gradient stopped (on-policy: ratios are 1 and the loss is the plain policy gradient).
   */
  readonly oldLogProbs?: tf.Tensor;
  /** Advantages: one per sequence `[B]` (outcome) or per action `[B, T]` (process-level). */
  readonly advantages: tf.Tensor;
  /** 1 where `[b, t]` is an action of sequence b, 0 for padding `[B, T]`. */
  readonly mask: tf.Tensor;
  /** Per-action policy entropies `[B, T]` for the entropy bonus (with `entropyCoefficient`). */
  readonly entropy?: tf.Tensor;
  /** `log π_ref(action)` `[B, T]` for the KL penalty (with `klCoefficient`). */
  readonly referenceLogProbs?: tf.Tensor;
}

/** Hyper-parameters of {@link policyLoss}. */
export interface PolicyLossOptions {
  /** PPO clip range ε: ratios are clipped to [1 − ε, 1 + ε] (default 0.2). */
  readonly clipRange?: number;
  /** Default `constant` (Dr. GRPO). */
  readonly aggregation?: LossAggregation;
  /** Divisor of the `constant` aggregation (default: the batch size B). */
  readonly normalizer?: number;
  /** Weight of the entropy bonus (default 0; needs `entropy`). */
  readonly entropyCoefficient?: number;
  /** Weight β of the KL penalty (default 0; needs `referenceLogProbs`). */
  readonly klCoefficient?: number;
}

/**
 * The clipped policy-gradient loss of PPO / GRPO (to minimise):
 *
 * `−agg(min(ρ·A, clip(ρ, 1 − ε, 1 + ε)·A)) − c_H·agg(H) + β·agg(KL)`
 *
 * with `ρ = exp(log π_θ − log π_old)` per action and `KL` the non-negative k3 estimator
 * `exp(log π_ref − log π_θ) − (log π_ref − log π_θ) − 1` (unbiased for KL(π_θ‖π_ref) under
 * samples of π_θ). Differentiable with respect to `logProbs` (and `entropy`).
 *
 * @example
 * ```ts
 * // NGC eq. 3 + 4: token and eviction log-probs share the rollout advantage (Dr. GRPO).
 * const loss = tf.add(
 *   policyLoss({ logProbs: tokenLogProbs, advantages, mask: tokenMask }),
 *   policyLoss({ logProbs: roundLogProbs, advantages, mask: roundWeights }),
 * );
 * ```
 * @throws LetheError `E_SHAPE` naming the input whose shape does not fit `logProbs`; `E_ARG`
 *   naming a bad option or a coefficient given without its input.
 */
export function policyLoss(inputs: PolicyLossInputs, options: PolicyLossOptions = {}): tf.Scalar {
  const { logProbs, advantages, mask } = inputs;
  if (logProbs.rank !== 2) {
    throw new LetheError('E_SHAPE', `must be [B, T], got [${logProbs.shape}]`, 'logProbs');
  }
  const [batch, time] = logProbs.shape as [number, number];
  for (const [name, tensor] of [
    ['oldLogProbs', inputs.oldLogProbs],
    ['mask', mask],
    ['entropy', inputs.entropy],
    ['referenceLogProbs', inputs.referenceLogProbs],
  ] as const) {
    if (tensor !== undefined) sameShape(tensor, [batch, time], name);
  }
  if (!(advantages.rank === 1 && advantages.shape[0] === batch)) {
    sameShape(advantages, [batch, time], 'advantages');
  }
  const clipRange = positive(options.clipRange ?? 0.2, 'clipRange');
  const normalizer = positive(options.normalizer ?? batch, 'normalizer');
  const aggregation = options.aggregation ?? 'constant';
  if (!AGGREGATIONS.includes(aggregation)) {
    throw new LetheError(
      'E_ARG',
      `must be one of ${AGGREGATIONS.join(', ')}, got ${JSON.stringify(aggregation)}`,
      'aggregation',
    );
  }
  const entropyCoefficient = coefficient(
    options.entropyCoefficient,
    inputs.entropy,
    'entropyCoefficient',
    'entropy',
  );
  const klCoefficient = coefficient(
    options.klCoefficient,
    inputs.referenceLogProbs,
    'klCoefficient',
    'referenceLogProbs',
  );

  return tf.tidy(() => {
    const weights = tf.cast(mask, 'float32');
    const aggregate = (x: tf.Tensor): tf.Scalar => {
      const masked = tf.mul(x, weights);
      if (aggregation === 'constant') return tf.div(tf.sum(masked), normalizer) as tf.Scalar;
      if (aggregation === 'token-mean') {
        return tf.div(tf.sum(masked), tf.maximum(tf.sum(weights), 1)) as tf.Scalar;
      }
      const perSequence = tf.div(tf.sum(masked, 1), tf.maximum(tf.sum(weights, 1), 1));
      return tf.mean(perSequence) as tf.Scalar;
    };
    const old = inputs.oldLogProbs ?? stopGradient(logProbs);
    const ratio = tf.exp(tf.sub(logProbs, old));
    const advantage = advantages.rank === 1 ? tf.expandDims(advantages, 1) : advantages;
    const surrogate = tf.minimum(
      tf.mul(ratio, advantage),
      tf.mul(tf.clipByValue(ratio, 1 - clipRange, 1 + clipRange), advantage),
    );
    let loss = tf.neg(aggregate(surrogate));
    if (entropyCoefficient !== 0) {
      loss = tf.sub(loss, tf.mul(entropyCoefficient, aggregate(inputs.entropy!)));
    }
    if (klCoefficient !== 0) {
      const logRatio = tf.sub(inputs.referenceLogProbs!, logProbs);
      const kl = tf.sub(tf.sub(tf.exp(logRatio), logRatio), 1);
      loss = tf.add(loss, tf.mul(klCoefficient, aggregate(kl)));
    }
    return loss as tf.Scalar;
  });
}

const AGGREGATIONS: readonly LossAggregation[] = ['token-mean', 'sequence-mean', 'constant'];

/** `x` in the forward pass, a zero gradient in the backward pass. */
const stopGradient = (x: tf.Tensor): tf.Tensor =>
  tf.customGrad((input, save) => {
    void save;
    return {
      value: tf.clone(input as tf.Tensor),
      gradFunc: (dy) => tf.zerosLike(dy as tf.Tensor),
    };
  })(x);

function sameShape(tensor: tf.Tensor, shape: readonly number[], argument: string): void {
  if (tensor.shape.length !== shape.length || tensor.shape.some((n, i) => n !== shape[i])) {
    throw new LetheError(
      'E_SHAPE',
      `must be [${shape}] like logProbs${argument === 'advantages' ? ` (or [${shape[0]}])` : ''}, got [${tensor.shape}]`,
      argument,
    );
  }
}

function positive(value: number, argument: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new LetheError('E_ARG', `must be a finite number > 0, got ${value}`, argument);
  }
  return value;
}

function coefficient(
  value: number | undefined,
  input: tf.Tensor | undefined,
  argument: string,
  inputName: string,
): number {
  if (value === undefined || value === 0) return 0;
  if (!Number.isFinite(value) || value < 0) {
    throw new LetheError('E_ARG', `must be a finite number ≥ 0, got ${value}`, argument);
  }
  if (input === undefined) {
    throw new LetheError('E_ARG', `is ${value} but no ${inputName} was given`, argument);
  }
  return value;
}
