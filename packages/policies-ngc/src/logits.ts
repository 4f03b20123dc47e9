import { LetheError } from '@lethe/core';

/**
 * How NGC's block scores s (mean attention, in [0, 1]) become the logits of eq. 2. The paper
 * feeds the scores in directly; since mean attention is at most 1 (and about 1/T for T live
 * entries), a softmax over raw scores is nearly uniform, which is why the other two forms exist.
 *
 * - `{ kind: 'score' }`: logits = s (paper-literal).
 * - `{ kind: 'log', temperature: τ }`: logits = log(max(s, {@link LOG_SCORE_FLOOR})) / τ. At τ = 1
 *   each draw picks a block in proportion to its attention mass; τ < 1 sharpens, τ > 1 flattens.
 * - `{ kind: 'scaled', temperature: τ }`: logits = s / τ.
 *
 * The default is {@link DEFAULT_NGC_LOGITS}.
 */
export type NgcLogits =
  | { readonly kind: 'score' }
  | { readonly kind: 'log'; readonly temperature: number }
  | { readonly kind: 'scaled'; readonly temperature: number };

/** The default logits: `{ kind: 'log', temperature: 1 }` (see the package README). */
export const DEFAULT_NGC_LOGITS: NgcLogits = Object.freeze({ kind: 'log', temperature: 1 });

/**
 * Scores below this value (0 in particular) are raised to it before the log of
 * `{ kind: 'log' }`, so the logits stay finite: log(1e-30) ≈ −69.08. A block scored at the floor
 * is about 10^-27 times as likely to be drawn first as a block holding all the attention.
 * Mean attention is at most 1, so at τ = 1 the valid logits of a round span at most ~69.1.
 */
export const LOG_SCORE_FLOOR = 1e-30;

/**
 * Checks a {@link NgcLogits} choice: a known `kind`, and for `log` / `scaled` a finite positive
 * `temperature`.
 *
 * @throws LetheError `E_ARG` naming `argument`.
 */
export function validateLogits(choice: NgcLogits, argument = 'logits'): NgcLogits {
  if (typeof choice !== 'object' || choice === null) {
    throw new LetheError('E_ARG', 'must be an NgcLogits object', argument);
  }
  const kind = (choice as { kind?: unknown }).kind;
  if (kind === 'score') return choice;
  if (kind !== 'log' && kind !== 'scaled') {
    throw new LetheError(
      'E_ARG',
      `unknown kind "${String(kind)}"; use score, log or scaled`,
      argument,
    );
  }
  const temperature = (choice as { temperature?: unknown }).temperature;
  if (!(typeof temperature === 'number' && Number.isFinite(temperature) && temperature > 0)) {
    throw new LetheError(
      'E_ARG',
      `temperature must be a finite number > 0, got ${String(temperature)}`,
      argument,
    );
  }
  return choice;
}

/**
 * Block logits from block scores on the host (computed in float64, returned as float32 — the
 * values a policy samples from and reports).
 *
 * @throws LetheError `E_ARG` naming `scores` for a NaN or infinite score, `logits` for a bad
 * choice.
 */
export function blockLogits(scores: ArrayLike<number>, choice: NgcLogits): Float32Array {
  validateLogits(choice);
  const out = new Float32Array(scores.length);
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i];
    if (!Number.isFinite(s)) {
      throw new LetheError('E_ARG', `${s} at index ${i}`, 'scores');
    }
    out[i] =
      choice.kind === 'score'
        ? s
        : choice.kind === 'log'
          ? Math.log(Math.max(s, LOG_SCORE_FLOOR)) / choice.temperature
          : s / choice.temperature;
  }
  return out;
}
