import type { DecoderModel } from '@lethe/model';
import { tf } from '@lethe/tensor';
import { type NgcLossParts, ngcLoss } from './ngc-loss';
import { replayBatch } from './replay-batch';
import { type ReplayScoring, replayLogProbs } from './replay-forward';
import type { NgcRollout } from './rollout';

const PARTS = ['token', 'memory'] as const;

/** The gradients of NGC's two loss terms (eq. 3 and 4) on one batch, measured apart. */
export interface LossGradients {
  /** Global norm of ∇L_token and of ∇L_mem over every parameter. */
  readonly tokenNorm: number;
  readonly memoryNorm: number;
  /** Norm of their sum, ∇(L_token + L_mem): the update's gradient before clipping. */
  readonly totalNorm: number;
  /** Cosine between the two (0 when either is zero). */
  readonly cosine: number;
}

/**
 * How much of an NGC update's gradient comes from the eviction term: replays `rollouts` as the
 * learner does (replay masks, eviction rounds scored; `microBatch` rollouts per forward) and
 * differentiates L_token and L_mem separately — one forward and backward each — with the
 * trainer's Dr. GRPO normalisation (the number of rollouts). Applies nothing: the model is left
 * as it was.
 */
export function lossGradients(
  model: DecoderModel,
  rollouts: readonly NgcRollout[],
  advantages: Float32Array,
  options: ReplayScoring & { readonly microBatch: number },
): LossGradients {
  const variables = [...model.parameters.values()];
  const sums: Record<'token' | 'memory', Map<string, tf.Tensor>> = {
    token: new Map(),
    memory: new Map(),
  };
  try {
    for (let start = 0; start < rollouts.length; start += options.microBatch) {
      const micro = rollouts.slice(start, start + options.microBatch);
      const batch = replayBatch(micro, {
        layers: model.config.num_hidden_layers,
        replayMasks: true,
        scoreRounds: true,
      });
      // A micro-batch that met no eviction round (ε = 0, or rollouts shorter than δ) adds nothing
      // to ∇L_mem: its eviction term is a constant.
      const parts = micro.some((r) => r.rounds.length > 0) ? PARTS : (['token'] as const);
      for (const part of parts) {
        const { value, grads } = tf.variableGrads(() => {
          const parts: NgcLossParts = ngcLoss(
            replayLogProbs(model, batch, options),
            batch,
            advantages.subarray(start, start + micro.length),
            rollouts.length,
          );
          const other = part === 'token' ? parts.memory : parts.token;
          tf.dispose([parts.loss, other]);
          return parts[part];
        }, variables);
        value.dispose();
        for (const [name, grad] of Object.entries(grads)) {
          const previous = sums[part].get(name);
          sums[part].set(name, previous === undefined ? grad : tf.add(previous, grad));
          if (previous !== undefined) tf.dispose([previous, grad]);
        }
      }
    }
    return tf.tidy(() => {
      const dot = (a: Map<string, tf.Tensor>, b: Map<string, tf.Tensor>): number =>
        [...a].reduce((sum, [name, g]) => {
          const h = b.get(name);
          return h === undefined ? sum : sum + tf.sum(tf.mul(g, h)).dataSync()[0]!;
        }, 0);
      const tokenSquare = dot(sums.token, sums.token);
      const memorySquare = dot(sums.memory, sums.memory);
      const cross = dot(sums.token, sums.memory);
      const tokenNorm = Math.sqrt(tokenSquare);
      const memoryNorm = Math.sqrt(memorySquare);
      return {
        tokenNorm,
        memoryNorm,
        totalNorm: Math.sqrt(Math.max(0, tokenSquare + memorySquare + 2 * cross)),
        cosine: tokenNorm > 0 && memoryNorm > 0 ? cross / (tokenNorm * memoryNorm) : 0,
      };
    });
  } finally {
    tf.dispose([...sums.token.values(), ...sums.memory.values()]);
  }
}
