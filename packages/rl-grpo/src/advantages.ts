import { assertInteger, LetheError } from '@lethe/core';

/**
 * How outcome advantages are normalised within a group:
 * - `std` (GRPO, Shao et al. 2024): `(r − mean) / (std + ε)`;
 * - `none` (Dr. GRPO, Liu et al. 2025): `r − mean`, no division by the group's standard
 *   deviation (which up-weights groups whose rewards barely differ).
 */
export type GroupNormalization = 'std' | 'none';

/** Options of {@link groupAdvantages}. */
export interface GroupAdvantageOptions {
  /** Rollouts per group: consecutive runs of `groupSize` rewards share a prompt. */
  readonly groupSize: number;
  /** Default `none` (Dr. GRPO). */
  readonly normalization?: GroupNormalization;
  /** Added to the standard deviation under `std` (default 1e-6). */
  readonly epsilon?: number;
}

/**
 * Outcome advantages of GRPO / Dr. GRPO: each rollout's reward minus the mean reward of its
 * group (rollouts of the same prompt), divided by the group's standard deviation (population,
 * i.e. over the G rewards) plus ε under `std`. Every token and every eviction decision of a
 * rollout then shares its advantage.
 *
 * @param rewards one scalar per rollout, groups laid out consecutively.
 * @returns one advantage per rollout (float32, ready for `tf.tensor`).
 * @throws LetheError `E_ARG` naming `rewards[i]` for a non-finite reward, `groupSize` when it is
 *   not a positive integer dividing the number of rewards, `epsilon` when negative or not finite.
 */
export function groupAdvantages(
  rewards: readonly number[],
  options: GroupAdvantageOptions,
): Float32Array {
  const { groupSize } = options;
  const epsilon = options.epsilon ?? 1e-6;
  checkRewards(rewards, 'rewards');
  checkGroups(rewards.length, groupSize);
  if (!(Number.isFinite(epsilon) && epsilon >= 0)) {
    throw new LetheError('E_ARG', `must be a finite number ≥ 0, got ${epsilon}`, 'epsilon');
  }
  const out = new Float32Array(rewards.length);
  for (let start = 0; start < rewards.length; start += groupSize) {
    const group = rewards.slice(start, start + groupSize);
    const mean = meanOf(group);
    const scale = options.normalization === 'std' ? stdOf(group, mean) + epsilon : 1;
    group.forEach((r, i) => {
      out[start + i] = (r - mean) / scale;
    });
  }
  return out;
}

/**
 * Process-level advantages (SOL): per-step rewards of each rollout are centred per step across
 * the rollouts of the group (`r[i][t] − mean_j r[j][t]`), then all centred values of the batch
 * are whitened together (`(c − mean) / (std + ε)`, population statistics).
 *
 * @param stepRewards `stepRewards[i][t]`: reward of rollout `i` at step `t`; the rollouts of a
 *   group must have the same number of steps.
 * @returns advantages with the same layout (float32 rows).
 * @throws LetheError `E_ARG` naming `stepRewards[i][t]` for a non-finite reward,
 *   `stepRewards[i]` for a rollout whose step count differs from its group's, `groupSize` as
 *   in {@link groupAdvantages}.
 */
export function processAdvantages(
  stepRewards: readonly (readonly number[])[],
  options: { readonly groupSize: number; readonly epsilon?: number },
): Float32Array[] {
  const { groupSize } = options;
  const epsilon = options.epsilon ?? 1e-6;
  checkGroups(stepRewards.length, groupSize);
  stepRewards.forEach((row, i) => {
    checkRewards(row, `stepRewards[${i}]`);
  });
  const centred: Float32Array[] = [];
  for (let start = 0; start < stepRewards.length; start += groupSize) {
    const group = stepRewards.slice(start, start + groupSize);
    const steps = group[0]!.length;
    group.forEach((row, i) => {
      if (row.length !== steps) {
        throw new LetheError(
          'E_ARG',
          `has ${row.length} steps but rollout ${start} of its group has ${steps}`,
          `stepRewards[${start + i}]`,
        );
      }
    });
    const stepMeans = Array.from({ length: steps }, (_, t) => meanOf(group.map((row) => row[t]!)));
    for (const row of group) centred.push(Float32Array.from(row, (r, t) => r - stepMeans[t]!));
  }
  const all = centred.flatMap((row) => Array.from(row));
  if (all.length === 0) return centred;
  const mean = meanOf(all);
  const scale = stdOf(all, mean) + epsilon;
  return centred.map((row) => row.map((c) => (c - mean) / scale));
}

function checkRewards(values: readonly number[], argument: string): void {
  values.forEach((r, i) => {
    if (!Number.isFinite(r)) {
      throw new LetheError('E_ARG', `must be a finite reward, got ${r}`, `${argument}[${i}]`);
    }
  });
}

function checkGroups(count: number, groupSize: number): void {
  assertInteger(groupSize, 'groupSize', 1);
  if (count % groupSize !== 0) {
    throw new LetheError(
      'E_ARG',
      `must divide the number of rollouts (${count}), got ${groupSize}`,
      'groupSize',
    );
  }
}

function meanOf(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

function stdOf(values: readonly number[], mean: number): number {
  let sum = 0;
  for (const v of values) sum += (v - mean) ** 2;
  return Math.sqrt(sum / values.length);
}
