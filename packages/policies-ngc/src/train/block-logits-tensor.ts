import { tf } from '@lethe/tensor';
import { LOG_SCORE_FLOOR, type NgcLogits, validateLogits } from '../logits';

/**
 * `blockLogits` (the host form, in the package's main entry) as a differentiable tfjs op for a
 * trainer: elementwise on a float32 tensor of any shape (e.g. `[rounds, blocks]`). For `log`,
 * scores below {@link LOG_SCORE_FLOOR} are raised to it (their gradient is 0). Values are not
 * checked (that would need a read-back). The caller owns the result.
 *
 * @throws LetheError `E_ARG` naming `logits` for a bad choice.
 */
export function blockLogitsTensor<T extends tf.Tensor>(scores: T, choice: NgcLogits): T {
  validateLogits(choice);
  return tf.tidy(() => {
    if (choice.kind === 'score') return tf.clone(scores);
    if (choice.kind === 'scaled') return tf.div(scores, choice.temperature);
    return tf.div(tf.log(tf.maximum(scores, LOG_SCORE_FLOOR)), choice.temperature);
  }) as T;
}
