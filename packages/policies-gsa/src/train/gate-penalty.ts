import { assertFiniteInRange, LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { logSigmoidGraph } from '../gate/gate-graph';

/**
 * The gate regulariser `L_gate` (what pushes gates to be sparse and decisive):
 *
 * - `'reference'` (the default; what the public Octopus code trains with): `mean(g + g(1 − g))`.
 * - `'entropy'` (the paper's §3.3): `mean(g + λ_ent · H(g))`, `H` the Bernoulli entropy in nats.
 */
export type GatePenaltyKind = 'reference' | 'entropy';

/** Options of {@link gatePenalty}. */
export interface GatePenaltyOptions {
  /** Which penalty (default `'reference'`). */
  readonly kind?: GatePenaltyKind;
  /** `λ_ent` of the `'entropy'` penalty (≥ 0; default 1; the paper gives no value). */
  readonly entropyWeight?: number;
}

/** {@link GatePenaltyOptions} with defaults filled in. */
export interface ResolvedGatePenalty {
  readonly kind: GatePenaltyKind;
  readonly entropyWeight: number;
}

/**
 * Fills in the penalty's defaults and checks them.
 *
 * @throws LetheError `E_ARG` naming `options.kind` or `options.entropyWeight`.
 */
export function resolvePenalty(options: GatePenaltyOptions): ResolvedGatePenalty {
  const kind = options.kind ?? 'reference';
  if (kind !== 'reference' && kind !== 'entropy') {
    throw new LetheError(
      'E_ARG',
      `must be "reference" or "entropy", got ${JSON.stringify(kind)}`,
      'options.kind',
    );
  }
  const entropyWeight = assertFiniteInRange(options.entropyWeight ?? 1, 'options.entropyWeight', 0);
  return { kind, entropyWeight };
}

/**
 * `L_gate` of the gate logits `s` of every layer (each `[B, T, outputs]`, `g = σ(s)`): the
 * penalty's mean over every token and output of a layer, averaged over layers (`E_ℓ` of the
 * paper). `mask` `[B, T]` (1 = a real token) leaves padding out. Computed from the logits with
 * `log σ(s)` and `log σ(−s)`, so the entropy stays finite at saturated gates.
 *
 * @throws LetheError `E_ARG` naming `logits` (empty), `options.kind` or `options.entropyWeight`.
 */
export function gatePenalty(
  logits: readonly tf.Tensor3D[],
  options: GatePenaltyOptions = {},
  mask?: tf.Tensor2D,
): tf.Scalar {
  const { kind, entropyWeight: lambda } = resolvePenalty(options);
  if (logits.length === 0) throw new LetheError('E_ARG', 'needs at least one layer', 'logits');
  return tf.tidy(() => {
    const perLayer = logits.map((s) => {
      const g = tf.sigmoid(s);
      const extra =
        kind === 'reference'
          ? tf.mul(g, tf.sub(1, g))
          : tf.mul(
              -lambda,
              tf.add(
                tf.mul(g, logSigmoidGraph(s)),
                tf.mul(tf.sub(1, g), logSigmoidGraph(tf.neg(s))),
              ),
            );
      const value = tf.mean(tf.add(g, extra), 2);
      if (mask === undefined) return tf.mean(value);
      return tf.div(tf.sum(tf.mul(value, mask)), tf.maximum(tf.sum(mask), 1));
    });
    return tf.div(tf.addN(perLayer), perLayer.length) as tf.Scalar;
  });
}
