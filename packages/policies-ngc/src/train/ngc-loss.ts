import { policyLoss } from '@lethe/rl-grpo';
import { tf } from '@lethe/tensor';
import type { ReplayBatch } from './replay-batch';
import type { ReplayLogProbs } from './replay-forward';

/** The parts of NGC's objective (eq. 3–5) for one (micro-)batch. */
export interface NgcLossParts {
  /** L = L_token + L_mem. */
  readonly loss: tf.Scalar;
  /** Eq. 3: −(1/G) Σ_i Σ_t log π(o_t | C_t) A_i. */
  readonly token: tf.Scalar;
  /** Eq. 4: −(1/G) Σ_i A_i Σ_ℓ (1/L) (1/|T_i^ℓ|) Σ_t log π(σ_t^ℓ | H_t^ℓ); 0 without rounds. */
  readonly memory: tf.Scalar;
}

/**
 * NGC's joint loss (eq. 5) with Dr. GRPO's constant normalisation: token and eviction log-probs
 * are summed (eviction rounds weighted 1/(L·|T_i^ℓ|)), multiplied by the rollout's advantage and
 * divided by `normalizer` (the number of rollouts in the whole update, so micro-batches add up
 * to the full-batch loss). On-policy, one update per batch: no importance ratio.
 *
 * @param advantages `[B]` advantages of the batch's rollouts (e.g. `groupAdvantages` of
 *   `@lethe/rl-grpo` with `normalization: 'none'`).
 */
export function ngcLoss(
  replay: ReplayLogProbs,
  batch: ReplayBatch,
  advantages: Float32Array,
  normalizer: number,
): NgcLossParts {
  return tf.tidy(() => {
    const advantage = tf.tensor1d(advantages);
    const options = { aggregation: 'constant', normalizer } as const;
    const token = policyLoss(
      {
        logProbs: replay.tokens,
        advantages: advantage,
        mask: tf.tensor2d(batch.tokenMask, [batch.size, batch.length]),
      },
      options,
    );
    const memory =
      batch.roundsPerRollout === 0
        ? tf.scalar(0)
        : policyLoss(
            {
              logProbs: replay.rounds,
              advantages: advantage,
              mask: tf.tensor2d(batch.roundWeights, [batch.size, batch.roundsPerRollout]),
            },
            options,
          );
    return { loss: tf.add(token, memory) as tf.Scalar, token, memory };
  });
}
