import { bareMessage, LetheError } from '@lethe/core';
import type { DecoderModel } from '@lethe/model';
import { type AdamW, clipByGlobalNorm, tf } from '@lethe/tensor';
import { ngcLoss } from './ngc-loss';
import { type ReplayBatch, replayBatch } from './replay-batch';
import { type ReplayScoring, replayLogProbs } from './replay-forward';
import type { NgcRollout } from './rollout';

/** Which objective an update optimises (NGC and the paper's ablations, §5.2.2). */
export type NgcVariant = 'ngc' | 'token-only' | 'dropout' | 'no-evict';

/**
 * What one learner update measured. The losses are the values of the on-policy surrogates (ρ = 1),
 * whose gradients are eq. 3–5's but whose values are not: L_mem's is 0 up to rounding.
 */
export interface LearnerUpdate {
  /** L = L_token + L_mem over the whole batch. */
  readonly loss: number;
  readonly tokenLoss: number;
  readonly memoryLoss: number;
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
}

/** Settings of {@link learnerUpdate}. */
export interface LearnerUpdateOptions extends ReplayScoring {
  readonly variant: NgcVariant;
  /** Rollouts per replay forward (gradients add up; the loss is the full batch's). */
  readonly microBatch: number;
  /** Global gradient-norm bound (paper: 1). */
  readonly clipNorm: number;
  readonly lr: number;
  /** Training step, for error messages. */
  readonly step: number;
}

/**
 * One on-policy learner update: replays the rollouts in micro-batches (NGC and token-only with
 * replay masks; dropout and no-evict with the plain causal mask), sums the gradients of
 * L = L_token + L_mem (L_mem only for `'ngc'`), clips them by global norm and applies AdamW.
 * A non-finite loss or gradient norm throws before any parameter changes.
 *
 * @param parameters the model's trainable variables by name (`model.parameters`).
 * @param advantages one per rollout.
 * @throws LetheError `E_STATE` naming `loss` or `gradNorm` when either is not finite, with the step;
 *   `E_SHAPE` naming `microBatch` when a micro-batch's replay would not fit the backend's tensor
 *   memory (checked before it is allocated: on wasm, an overflow would abort the module).
 */
export async function learnerUpdate(
  model: DecoderModel,
  optimizer: AdamW,
  rollouts: readonly NgcRollout[],
  advantages: Float32Array,
  options: LearnerUpdateOptions,
): Promise<LearnerUpdate> {
  const parameters = model.parameters;
  const nameOf = new Map([...parameters].map(([name, variable]) => [variable.name, name]));
  const replayMasks = options.variant === 'ngc' || options.variant === 'token-only';
  const scoreRounds = options.variant === 'ngc';
  const sums = new Map<string, tf.Tensor>();
  let token = 0;
  let memory = 0;
  try {
    for (let start = 0; start < rollouts.length; start += options.microBatch) {
      const micro = rollouts.slice(start, start + options.microBatch);
      const batch = replayBatch(micro, {
        layers: model.config.num_hidden_layers,
        replayMasks,
        scoreRounds,
      });
      const parts: tf.Scalar[] = [];
      const { value, grads } = tf.variableGrads(() => {
        const replay = replayOf(model, batch, options);
        const loss = ngcLoss(
          replay,
          batch,
          advantages.subarray(start, start + micro.length),
          rollouts.length,
        );
        parts.push(tf.keep(loss.token), tf.keep(loss.memory));
        return loss.loss;
      }, [...parameters.values()]);
      const [tokenValue, memoryValue] = await Promise.all(parts.map((p) => p.data()));
      token += tokenValue![0]!;
      memory += memoryValue![0]!;
      tf.dispose([value, ...parts]);
      for (const [variableName, grad] of Object.entries(grads)) {
        const name = nameOf.get(variableName)!;
        const previous = sums.get(name);
        if (previous === undefined) {
          sums.set(name, grad);
        } else {
          sums.set(name, tf.add(previous, grad));
          tf.dispose([previous, grad]);
        }
      }
    }
    const clipped = clipByGlobalNorm(sums, options.clipNorm);
    try {
      const gradNorm = (await clipped.norm.data())[0]!;
      const loss = token + memory;
      if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
        throw new LetheError(
          'E_STATE',
          `non-finite ${Number.isFinite(loss) ? 'gradient norm' : 'loss'} at step ${options.step} (loss ${loss}, gradient norm ${gradNorm}); no update applied`,
          Number.isFinite(loss) ? 'gradNorm' : 'loss',
        );
      }
      optimizer.applyGradients(clipped.grads, options.lr);
      return { loss, tokenLoss: token, memoryLoss: memory, gradNorm };
    } finally {
      tf.dispose([clipped.norm, ...clipped.grads.values()]);
    }
  } finally {
    tf.dispose([...sums.values()]);
  }
}

/** {@link replayLogProbs}, a replay too large for the backend's memory refused naming `microBatch`. */
function replayOf(model: DecoderModel, batch: ReplayBatch, options: LearnerUpdateOptions) {
  try {
    return replayLogProbs(model, batch, options);
  } catch (error) {
    if (error instanceof LetheError && error.code === 'E_SHAPE' && error.argument === 'inputIds') {
      throw new LetheError(
        'E_SHAPE',
        `a replay of ${batch.size} rollouts of ${batch.length} tokens at step ${options.step} does not fit: ${bareMessage(error)}; replay fewer rollouts at once`,
        'microBatch',
      );
    }
    throw error;
  }
}
