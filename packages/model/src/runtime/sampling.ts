import { LetheError, type Rng } from '@lethe/tensor';

/** How the next token is drawn from the logits. */
export interface SamplingOptions {
  /** Softmax temperature; 0 means greedy (argmax). Default 1. */
  readonly temperature?: number;
  /** Keep only the k most likely tokens (0 or undefined: all). */
  readonly topK?: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p, in (0, 1]. Default 1. */
  readonly topP?: number;
}

/** A drawn token and the log-probability the (temperature-scaled, filtered) distribution gave it. */
export interface SampledToken {
  readonly token: number;
  readonly logProb: number;
}

/** Validates sampling options, throwing `E_ARG` naming the field. */
export function validateSampling(options: SamplingOptions): void {
  const { temperature = 1, topK = 0, topP = 1 } = options;
  if (!(Number.isFinite(temperature) && temperature >= 0)) {
    throw new LetheError(
      'E_ARG',
      `must be a finite number ≥ 0, got ${temperature}`,
      'sampling.temperature',
    );
  }
  if (!(Number.isInteger(topK) && topK >= 0)) {
    throw new LetheError('E_ARG', `must be a non-negative integer, got ${topK}`, 'sampling.topK');
  }
  if (!(topP > 0 && topP <= 1)) {
    throw new LetheError('E_ARG', `must be in (0, 1], got ${topP}`, 'sampling.topP');
  }
}

/**
 * Draws one token from `logits` (one row) with temperature, top-k and top-p filtering, using one
 * uniform from `rng`. Greedy (temperature 0) picks the lowest index among ties and reports
 * log-probability 0. Computed in float64 on the host.
 */
export function sampleToken(
  logits: ArrayLike<number>,
  options: SamplingOptions,
  rng: Rng,
): SampledToken {
  const { temperature = 1, topK = 0, topP = 1 } = options;
  const n = logits.length;
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(logits[i]!))
      throw new LetheError('E_ARG', `NaN logit at index ${i}`, 'logits');
  }
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < n; i++) if (logits[i]! > logits[best]!) best = i;
    return { token: best, logProb: 0 };
  }
  // Order tokens by logit (stable: lower index first among ties), then cut by top-k and top-p.
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => logits[b]! - logits[a]! || a - b,
  );
  const kept = topK > 0 ? Math.min(topK, n) : n;
  const max = logits[order[0]!]! / temperature;
  const weights = new Float64Array(kept);
  let total = 0;
  for (let r = 0; r < kept; r++) {
    weights[r] = Math.exp(logits[order[r]!]! / temperature - max);
    total += weights[r]!;
  }
  let nucleus = kept;
  if (topP < 1) {
    let mass = 0;
    for (let r = 0; r < kept; r++) {
      mass += weights[r]! / total;
      if (mass >= topP) {
        nucleus = r + 1;
        break;
      }
    }
    total = 0;
    for (let r = 0; r < nucleus; r++) total += weights[r]!;
  }
  const u = rng.uniform(1)[0]! * total;
  let acc = 0;
  let pick = nucleus - 1;
  for (let r = 0; r < nucleus; r++) {
    acc += weights[r]!;
    if (u < acc) {
      pick = r;
      break;
    }
  }
  return { token: order[pick]!, logProb: Math.log(weights[pick]! / total) };
}
