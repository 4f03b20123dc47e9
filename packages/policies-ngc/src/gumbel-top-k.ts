import { assertInteger, LetheError } from '@lethe/core';
import { type RandomSource, ranksBefore } from '@lethe/kv-cache';

/**
 * The uniform that replaces `u = 0` before the Gumbel transform: 2^-149, the smallest positive
 * float32. A `RandomSource` fills a `Float32Array`, so nothing positive lies below it and the
 * map u ↦ −log(−log u) stays monotone; the resulting Gumbel value is finite (≈ −4.64).
 */
export const GUMBEL_UNIFORM_FLOOR = 2 ** -149;

/**
 * Checks logits for the Gumbel-top-k functions: no NaN and no +Infinity. −Infinity is allowed
 * and means "probability zero while any finite logit is still unselected" (see
 * {@link gumbelTopKLogProb}).
 *
 * @throws LetheError `E_ARG` naming `argument` and the first bad index.
 */
export function assertGumbelLogits(logits: ArrayLike<number>, argument = 'logits'): void {
  for (let i = 0; i < logits.length; i++) {
    const s = logits[i];
    if (Number.isNaN(s) || s === Number.POSITIVE_INFINITY) {
      throw new LetheError(
        'E_ARG',
        `${s} at index ${i} (−Infinity is the only non-finite value allowed)`,
        argument,
      );
    }
  }
}

function checkK(k: number, n: number): void {
  assertInteger(k, 'k', 0);
  if (k > n) throw new LetheError('E_ARG', `must be ≤ the number of logits (${n}), got ${k}`, 'k');
}

/**
 * Samples an ordered sequence of `k` distinct indices without replacement from the
 * Plackett–Luce distribution of eq. 2 (NGC §4.3) by the Gumbel-top-k trick: draws
 * g_i = −log(−log u_i) from independent uniforms u_i ∈ [0, 1) of `rng` (one per logit, in index
 * order; `u = 0` is replaced by {@link GUMBEL_UNIFORM_FLOOR}) and returns the indices of the
 * `k` largest `logits[i] + g_i`, largest first, computed in float64. Ties of perturbed values
 * (probability zero for continuous noise) go to the lower index.
 *
 * Logits of −Infinity come after every finite one, in the order of their own Gumbel noise —
 * uniformly at random among themselves, the limit of equal finite logits going to −∞. This is the
 * distribution {@link gumbelTopKLogProb} scores.
 *
 * Draws exactly `logits.length` uniforms (also when `k` is 0), so a policy's random stream
 * advances by a known amount per round. O(N log N).
 *
 * @param logits N logits (no NaN or +Infinity).
 * @param k Number of indices to draw, an integer in [0, N].
 * @returns σ, `[k]`: σ_1 is the first draw.
 * @throws LetheError `E_ARG` for bad logits or `k`.
 */
export function sampleGumbelTopK(
  logits: ArrayLike<number>,
  k: number,
  rng: RandomSource,
): Int32Array {
  const n = logits.length;
  assertGumbelLogits(logits);
  checkK(k, n);
  const uniforms = rng.fillUniform(new Float32Array(n));
  const noise = new Float64Array(n);
  const perturbed = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const u = uniforms[i] > 0 ? uniforms[i] : GUMBEL_UNIFORM_FLOOR;
    noise[i] = -Math.log(-Math.log(u));
    perturbed[i] = logits[i] + noise[i];
  }
  const index = Array.from({ length: n }, (_, i) => i);
  index.sort((a, b) => {
    const finiteA = logits[a] !== Number.NEGATIVE_INFINITY;
    const finiteB = logits[b] !== Number.NEGATIVE_INFINITY;
    if (finiteA !== finiteB) return finiteA ? -1 : 1;
    const keys = finiteA ? perturbed : noise;
    return ranksBefore(keys, a, b) ? -1 : 1;
  });
  return Int32Array.from(index.slice(0, k));
}

/**
 * The `k` largest logits in decreasing order, ties to the lower index (kv-cache's `ranksBefore`):
 * NGC's evaluation mode (§5.1, "greedy top-k selection"). Draws nothing. O(N log N).
 *
 * @throws LetheError `E_ARG` for bad logits (see {@link assertGumbelLogits}) or `k`.
 */
export function greedyTopK(logits: ArrayLike<number>, k: number): Int32Array {
  const n = logits.length;
  assertGumbelLogits(logits);
  checkK(k, n);
  const index = Array.from({ length: n }, (_, i) => i);
  index.sort((a, b) => (ranksBefore(logits, a, b) ? -1 : 1));
  return Int32Array.from(index.slice(0, k));
}

/**
 * Checks an ordered selection: integer entries, distinct, in `[0, n)`.
 *
 * @throws LetheError `E_ARG` naming `argument`.
 */
export function assertOrder(order: ArrayLike<number>, n: number, argument = 'order'): void {
  if (order.length > n) {
    throw new LetheError('E_ARG', `has ${order.length} entries for ${n} items`, argument);
  }
  const seen = new Uint8Array(n);
  for (let j = 0; j < order.length; j++) {
    const i = order[j];
    if (!(Number.isInteger(i) && i >= 0 && i < n)) {
      throw new LetheError('E_ARG', `entry ${j} is ${i}, outside [0, ${n})`, argument);
    }
    if (seen[i] !== 0) throw new LetheError('E_ARG', `index ${i} repeated`, argument);
    seen[i] = 1;
  }
}

/**
 * Exact log-probability of the ordered sequence σ = `order` under sequential sampling without
 * replacement (Plackett–Luce), NGC eq. 2:
 *
 *   log p(σ | s) = Σ_j [ s_{σ_j} − log Σ_{t ∉ {σ_1 … σ_{j−1}}} exp(s_t) ],
 *
 * which is the probability that {@link sampleGumbelTopK} returns σ.
 *
 * **Computation** (float64, O(N + K) once σ is known). The j-th partition function covers the
 * unselected items plus the suffix σ_j … σ_K. With U = Σ_{t unselected} exp(s_t − m) and suffix
 * sums S_j = Σ_{i ≥ j} exp(s_{σ_i} − m) it is m + log(U + S_j): a sum of positive terms, never a
 * difference, so there is no cancellation. (Subtracting the selected mass from the full
 * partition function, the "prefix" direction, cancels catastrophically once the selected
 * blocks hold most of the mass — exactly the regime of a confident policy.) The pass runs
 * j = K … 1 and keeps the shift m equal to the largest logit seen so far (the online
 * log-sum-exp rescaling S ← S·exp(m_old − m_new)), so U + S_j ≥ 1 at every step: no underflow
 * even when the logits span more than float64's exponent range, where one global shift would
 * round U + S_j to 0. When the largest logit is unselected this is literally m = max s.
 *
 * **−Infinity logits** have probability zero while a finite logit remains unselected (that term
 * and the total are −Infinity); once only −Infinity items remain, each of the r remaining is
 * drawn with probability 1/r (the limit of equal finite logits going to −∞, and what
 * {@link sampleGumbelTopK} does). Probabilities over all sequences still sum to one.
 *
 * An empty `order` has log-probability 0.
 *
 * @param logits N logits (no NaN or +Infinity).
 * @param order σ, `[K]`, distinct indices in `[0, N)`.
 * @throws LetheError `E_ARG` naming `logits` or `order`.
 */
export function gumbelTopKLogProb(logits: ArrayLike<number>, order: ArrayLike<number>): number {
  const n = logits.length;
  assertGumbelLogits(logits);
  assertOrder(order, n);
  const selected = new Uint8Array(n);
  for (let j = 0; j < order.length; j++) selected[order[j]] = 1;

  // Unselected items: finite ones as a shifted sum (shift = their max), −∞ ones as a count.
  let shift = Number.NEGATIVE_INFINITY;
  for (let t = 0; t < n; t++) {
    if (selected[t] === 0 && logits[t] > shift) shift = logits[t];
  }
  let mass = 0; // Σ exp(s − shift) over the finite remaining items; ≥ 1 once any is finite.
  let infinite = 0; // number of −∞ remaining items
  for (let t = 0; t < n; t++) {
    if (selected[t] !== 0) continue;
    if (logits[t] === Number.NEGATIVE_INFINITY) infinite += 1;
    else mass += Math.exp(logits[t] - shift);
  }

  let total = 0;
  for (let j = order.length - 1; j >= 0; j--) {
    const s = logits[order[j]];
    if (s === Number.NEGATIVE_INFINITY) {
      infinite += 1;
      // Drawn while a finite item remains: impossible. Otherwise uniform among the −∞ items.
      total += mass > 0 ? Number.NEGATIVE_INFINITY : -Math.log(infinite);
      continue;
    }
    if (s > shift) {
      mass = mass * Math.exp(shift - s) + 1;
      shift = s;
    } else {
      mass += Math.exp(s - shift);
    }
    total += s - (shift + Math.log(mass));
  }
  return total;
}
