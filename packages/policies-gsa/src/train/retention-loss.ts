import { LetheError } from '@lethe/core';
import { tf } from '@lethe/tensor';
import { evictionBoundaries } from './eviction-boundaries';
import type { ResolvedRetention } from './retention-options';

/** {@link retentionLoss}'s value and its hard counterpart, both scalars the caller owns. */
export interface RetentionTerms {
  /** `L_ret`, the differentiable term. */
  readonly loss: tf.Scalar;
  /** The teacher's attention the budgeted caches would really lose (mean per row and head). */
  readonly lost: tf.Scalar;
}

/**
 * `L_ret`, the budget-retention term (this project's, not the paper's; see the package README):
 * how much of the teacher's attention a GSA cache evicting by the gate would lose, made
 * differentiable. For every scored query row `t` (those `rows` marks, and the
 * `retention.observationRows` before a sequence's first), KV head `h` and budget `b` of
 * `retention`, the cache keeps the sinks, the window and the `⌊b·n⌋ − sinks − window` evictable
 * entries of highest gate score (`n` the sequence's real length), i.e. those scoring at least
 * `θ`, the score of the row's boundary entry ({@link evictionBoundaries}); the term is
 * `Σ_j A[t, h, j] · softplus(θ − s_j)` over the evictable entries `j`, `A` the teacher's attention
 * averaged over the group's query heads. An entry the row attends to is pushed above the boundary
 * with a force that does not vanish however far below it lies, and the boundary entry is pushed
 * down by as much (`θ` is an order statistic of the scores: its gradient goes to the entry that
 * holds it); an entry comfortably above the boundary, or one the row does not attend to, is left
 * alone. Averaged over rows, heads, layers and budgets; a budget that keeps no more than the
 * anchors of a sequence has nothing to choose and adds 0.
 *
 * Call it inside the scope that takes the gradient (the logits are read, not disposed).
 *
 * @param teacher per layer `[B, Hq, T, T]`, the full model's attention (a constant).
 * @param logits per layer `[B, T, outputs]`, the gate's scores (what gets the gradient).
 * @param rows `[B, T]`, 1 at the query rows whose answers are scored (`NextTokenBatch.mask`).
 * @param real `[B, T]`, 1 at real tokens (`NextTokenBatch.inputMask`).
 * @throws LetheError `E_ARG` naming `logits` when it has another number of layers (or none).
 */
export function retentionLoss(
  teacher: readonly tf.Tensor4D[],
  logits: readonly tf.Tensor3D[],
  rows: tf.Tensor2D,
  real: tf.Tensor2D,
  retention: ResolvedRetention,
): RetentionTerms {
  if (logits.length === 0 || logits.length !== teacher.length) {
    throw new LetheError(
      'E_ARG',
      `needs one entry per teacher layer (${teacher.length}), got ${logits.length}`,
      'logits',
    );
  }
  const [batch, length] = rows.shape;
  const rowValues = rows.dataSync();
  const realValues = real.dataSync();
  const scored: { b: number; t: number }[] = [];
  const lengths = new Array<number>(batch).fill(0);
  for (let b = 0; b < batch; b++) {
    const first = rowValues.subarray(b * length, (b + 1) * length).findIndex((v) => v > 0);
    const from = first < 0 ? length : Math.max(0, first - retention.observationRows);
    for (let t = 0; t < length; t++) {
      if (realValues[b * length + t]! > 0) lengths[b]!++;
      if (t >= from && (t < first || rowValues[b * length + t]! > 0)) scored.push({ b, t });
    }
  }
  return tf.tidy(() => {
    if (scored.length === 0) return { loss: tf.scalar(0), lost: tf.scalar(0) };
    const count = scored.length;
    const queryHeads = teacher[0]!.shape[1];
    // Row (b, t) of query head h is row (b·Hq + h)·T + t of the attention seen as [B·Hq·T, T]:
    // gathering those copies only the scored rows, never the whole T×T matrices.
    const rowIndex = tf.tensor1d(
      scored.flatMap(({ b, t }) =>
        Array.from({ length: queryHeads }, (_, h) => (b * queryHeads + h) * length + t),
      ),
      'int32',
    );
    const batchIndex = tf.tensor1d(
      scored.map(({ b }) => b),
      'int32',
    );
    const candidates = evictable(scored, length, retention);
    const soft: tf.Scalar[] = [];
    const hard: tf.Scalar[] = [];
    logits.forEach((s, l) => {
      const outputs = s.shape[2];
      // The scored rows [R, Hq, T] as their group means [R, outputs, T].
      const rows = tf.gather(tf.reshape(teacher[l]!, [-1, length]), rowIndex);
      const grouped = tf.reshape(rows, [count, outputs, queryHeads / outputs, length]);
      const attended = tf.mul(tf.mean(grouped, 2), candidates);
      const byHead = tf.transpose(s, [0, 2, 1]);
      const scores = tf.gather(byHead, batchIndex) as tf.Tensor3D;
      const values = byHead.dataSync() as Float32Array;
      for (const budget of retention.budgets) {
        const { boundary, active } = rowBoundaries(values, lengths, scored, outputs, {
          length,
          budget,
          retention,
        });
        const theta = tf.sum(tf.mul(boundary, scores), 2, true);
        const below = tf.sub(theta, scores);
        const weight = tf.mul(attended, tf.expandDims(active, 2));
        soft.push(tf.sum(tf.mul(weight, tf.softplus(below))));
        hard.push(tf.sum(tf.mul(weight, tf.cast(tf.greater(below, 0), 'float32'))));
      }
    });
    const norm = count * logits[0]!.shape[2] * soft.length;
    return {
      loss: tf.div(tf.addN(soft), norm) as tf.Scalar,
      lost: tf.div(tf.addN(hard), norm) as tf.Scalar,
    };
  });
}

/** `[R, 1, T]`: 1 at the evictable entries `[sinks, t − window]` of each scored row. */
function evictable(
  scored: readonly { t: number }[],
  length: number,
  { sinks, window }: ResolvedRetention,
): tf.Tensor3D {
  const values = new Float32Array(scored.length * length);
  scored.forEach(({ t }, r) => {
    for (let j = sinks; j <= t - window; j++) values[r * length + j] = 1;
  });
  return tf.tensor3d(values, [scored.length, 1, length]);
}

/**
 * Per scored row and output at one budget, the boundary entry of {@link evictionBoundaries} as a
 * one-hot `[R, outputs, T]` (all 0 where nothing is evicted) and whether anything is (`active`
 * `[R, outputs]`, 1 or 0).
 */
function rowBoundaries(
  byHead: Float32Array,
  lengths: readonly number[],
  scored: readonly { b: number; t: number }[],
  outputs: number,
  at: { length: number; budget: number; retention: ResolvedRetention },
): { boundary: tf.Tensor3D; active: tf.Tensor2D } {
  const { length, budget, retention } = at;
  const perSequence = lengths.map((n, b) => {
    const selected = Math.floor(budget * n) - retention.sinks - retention.window;
    if (selected < 1) return undefined;
    return Array.from({ length: outputs }, (_, o) =>
      evictionBoundaries(byHead, n, { ...retention, selected }, (b * outputs + o) * length),
    );
  });
  const boundary = new Float32Array(scored.length * outputs * length);
  const active = new Float32Array(scored.length * outputs);
  scored.forEach(({ b, t }, r) => {
    const heads = perSequence[b];
    for (let o = 0; o < outputs && heads !== undefined; o++) {
      const j = heads[o]![t]!;
      if (j < 0) continue;
      boundary[(r * outputs + o) * length + j] = 1;
      active[r * outputs + o] = 1;
    }
  });
  return {
    boundary: tf.tensor3d(boundary, [scored.length, outputs, length]),
    active: tf.tensor2d(active, [scored.length, outputs]),
  };
}
