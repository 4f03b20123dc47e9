import { assertInteger, LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { assertOrder } from '../gumbel-top-k';

/** One recorded eviction round for {@link gumbelTopKLogProbTensor}: its block count and σ. */
export interface GumbelRound {
  /** Number of blocks N of the round: row r of the logits is valid in columns `[0, blocks)`. */
  readonly blocks: number;
  /** The ordered selection σ, `[K]`, distinct block indices in `[0, blocks)`. */
  readonly order: Int32Array;
}

/** Identity whose gradient is zero: a shift that the result does not depend on. */
const stopGradient = tf.customGrad(((x: tf.Tensor) => ({
  value: tf.clone(x),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
})) as unknown as Parameters<typeof tf.customGrad>[0]) as <T extends tf.Tensor>(x: T) => T;

/**
 * log(exp(a) + exp(b)) elementwise for finite a, b: m + log(exp(a − m) + exp(b − m)) with
 * m = max(a, b) held constant, so the gradient is exactly the softmax weights (also at ties).
 */
function logAddExp(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const m = stopGradient(tf.maximum(a, b));
  return tf.add(m, tf.log(tf.add(tf.exp(tf.sub(a, m)), tf.exp(tf.sub(b, m)))));
}

/**
 * Checks the rounds against the logits' shape on the host.
 *
 * @throws LetheError `E_SHAPE` (`rounds`) for a row-count mismatch, `E_ARG` naming
 * `rounds[r].blocks` / `rounds[r].order`.
 */
function checkRounds(rounds: readonly GumbelRound[], rows: number, columns: number): void {
  if (!Array.isArray(rounds) || rounds.length !== rows) {
    throw new LetheError('E_SHAPE', `needs one round per logits row (${rows})`, 'rounds');
  }
  rounds.forEach((round, r) => {
    assertInteger(round.blocks, `rounds[${r}].blocks`, 0);
    if (round.blocks > columns) {
      throw new LetheError(
        'E_ARG',
        `${round.blocks} blocks exceed the logits' ${columns} columns`,
        `rounds[${r}].blocks`,
      );
    }
    assertOrder(round.order, round.blocks, `rounds[${r}].order`);
  });
}

/**
 * Batched, differentiable NGC eq. 2: for each row r, the log-probability of the ordered block
 * sequence `rounds[r].order` under Gumbel-top-k sampling from the logits of that row, the
 * quantity {@link gumbelTopKLogProb} computes on the host (same value up to float32 rounding).
 * This is what a policy-gradient trainer differentiates (NGC §4.4).
 *
 * Row r is valid in columns `[0, rounds[r].blocks)`; columns past it are padding, may hold
 * anything (even NaN or ±Infinity) and get exactly zero gradient. Valid logits must be finite
 * (`blockLogitsTensor` guarantees it for the score-derived logits); the host version is the one
 * that defines −Infinity.
 *
 * **Computation.** The j-th partition function is logaddexp(log U, log S_j), with U the mass of
 * the unselected valid blocks (one masked log-sum-exp per row) and S_j = Σ_{i ≥ j} exp(s_{σ_i})
 * the suffix mass of the selection, as in the host version: sums of positive terms, no
 * cancellation. The suffix sums are kept in log space — a reverse cumulative log-sum-exp by
 * ⌈log₂ K⌉ doubling steps (L_j ← logaddexp(L_j, L_{j+2^k})) — instead of one `cumsum` of
 * exp(s − max) per row: in float32, exp underflows below about −87, so a single shift makes the
 * late suffix sums 0 (and the log-probability +∞ in place of a finite value) whenever a row's
 * logits span more than ~87 — e.g. `{ kind: 'log', temperature: 0.5 }` logits of scores down to
 * the floor. The doubling form has no such limit and costs O(R · (N + K log K)) work with
 * O(R · (N + K)) memory. Gather indices and masks are built on the host.
 *
 * @param logits `[R, Nmax]` float32 block logits, one eviction round per row.
 * @param rounds R rounds: block count and the ordered selection σ of each.
 * @returns `[R]` log-probabilities (0 for an empty σ). The caller owns the tensor; intermediate
 * tensors are released.
 * @throws LetheError `E_SHAPE` for non-2-D logits or a row-count mismatch, `E_DTYPE` for
 * non-float32 logits, `E_ARG` naming the bad round field.
 */
export function gumbelTopKLogProbTensor(
  logits: tf.Tensor2D,
  rounds: readonly GumbelRound[],
): tf.Tensor1D {
  if (!(logits instanceof tf.Tensor) || logits.rank !== 2) {
    throw new LetheError('E_SHAPE', 'must be a 2-D tensor [rounds, blocks]', 'logits');
  }
  if (logits.dtype !== 'float32') {
    throw new LetheError('E_DTYPE', `must be float32, got ${logits.dtype}`, 'logits');
  }
  const [rows, columns] = logits.shape;
  checkRounds(rounds, rows, columns);
  const longest = rounds.reduce((most, round) => Math.max(most, round.order.length), 0);

  // Host-side masks and indices.
  const valid = new Uint8Array(rows * columns);
  const unselected = new Uint8Array(rows * columns);
  const hasUnselected = new Uint8Array(rows);
  const gather = new Int32Array(rows * longest); // flat indices into logits; 0 in padding slots
  const chosen = new Uint8Array(rows * longest);
  rounds.forEach((round, r) => {
    valid.fill(1, r * columns, r * columns + round.blocks);
    unselected.fill(1, r * columns, r * columns + round.blocks);
    round.order.forEach((block, j) => {
      unselected[r * columns + block] = 0;
      gather[r * longest + j] = r * columns + block;
      chosen[r * longest + j] = 1;
    });
    hasUnselected[r] = round.order.length < round.blocks ? 1 : 0;
  });
  // partner[k][r, j]: whether slot j + 2^k holds a selected block in row r (doubling step k).
  const partners: Uint8Array[] = [];
  for (let offset = 1; offset < longest; offset *= 2) {
    const partner = new Uint8Array(rows * longest);
    rounds.forEach((round, r) => {
      partner.fill(1, r * longest, r * longest + Math.max(0, round.order.length - offset));
    });
    partners.push(partner);
  }

  return tf.tidy(() => {
    const mask = (flags: Uint8Array, shape: number[]) => tf.tensor(flags, shape, 'bool');
    // Padding replaced by 0 through `where`, whose gradient there is exactly 0 (even for NaN).
    const clean = tf.where(mask(valid, [rows, columns]), logits, tf.zerosLike(logits));
    if (longest === 0) return tf.mul(tf.sum(clean, 1), 0) as tf.Tensor1D;

    // log U per row: a masked log-sum-exp over the unselected valid blocks (0 where none).
    const unselectedMask = mask(unselected, [rows, columns]);
    const some = mask(hasUnselected, [rows, 1]);
    const rowMax = tf.max(
      tf.where(unselectedMask, clean, tf.fill(clean.shape, -Infinity)),
      1,
      true,
    );
    const shift = stopGradient(tf.where(some, rowMax, tf.zerosLike(rowMax)));
    const shifted = tf.where(unselectedMask, tf.sub(clean, shift), tf.fill(clean.shape, -Infinity));
    const mass = tf.sum(tf.exp(shifted), 1, true);
    const logU = tf.add(shift, tf.log(tf.where(some, mass, tf.onesLike(mass))));

    // Selected logits s_{σ_j}, [R, K]; padding slots 0.
    const chosenMask = mask(chosen, [rows, longest]);
    const picked = tf.reshape(
      tf.gather(tf.reshape(clean, [rows * columns]), tf.tensor1d(gather, 'int32')),
      [rows, longest],
    );
    const selectedLogits = tf.where(chosenMask, picked, tf.zerosLike(picked));

    // Reverse cumulative log-sum-exp of the selection by doubling.
    let suffix: tf.Tensor = selectedLogits;
    partners.forEach((partner, k) => {
      const offset = 2 ** k;
      const ahead = tf.concat(
        [tf.slice(suffix, [0, offset], [rows, longest - offset]), tf.zeros([rows, offset])],
        1,
      );
      suffix = tf.where(mask(partner, [rows, longest]), logAddExp(suffix, ahead), suffix);
    });

    const logZ = tf.where(some, logAddExp(tf.broadcastTo(logU, [rows, longest]), suffix), suffix);
    const terms = tf.where(chosenMask, tf.sub(selectedLogits, logZ), tf.zerosLike(logZ));
    return tf.sum(terms, 1) as tf.Tensor1D;
  });
}
