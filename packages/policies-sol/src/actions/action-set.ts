import { LetheError } from '@lethe/core';

/** The three compute knobs of one decode step (SOL §4, App. E), broadcast to every layer. */
export interface SolAction {
  /** κ: token-attention keep rate in (0, 1] (Quest pages read; 1 reads densely). */
  readonly tokenKeep: number;
  /** ρ: MLP input-channel keep rate in (0, 1] (1 keeps all). */
  readonly mlpInputKeep: number;
  /** q: bit width of the MLP output's fake quantisation, 2–16 (16 is the dense path). */
  readonly activationBits: number;
}

/** The levels each axis may take; the actions are their Cartesian product. */
export interface ActionLevels {
  /** κ levels, each in (0, 1]. */
  readonly tokenKeep: readonly number[];
  /** ρ levels, each in (0, 1]. */
  readonly mlpInputKeep: readonly number[];
  /** q levels, integers in [2, 16]. */
  readonly activationBits: readonly number[];
}

/** The efficiency of an action per axis, `[κ, ρ, η]` with `η = q / 16` (the paper's budget units). */
export type AxisUsage = readonly [number, number, number];

/** Names of the three axes, in {@link AxisUsage} order. */
export const AXES = ['tokenKeep', 'mlpInputKeep', 'activationBits'] as const;

/** The widest bit width: the dense path, `η = 1`. */
export const FULL_PRECISION_BITS = 16;

/**
 * A discrete SOL action space: the Cartesian product of per-axis levels, each axis sorted
 * ascending, action `a = (i·|ρ| + j)·|q| + k` for the `i`-th κ, `j`-th ρ and `k`-th q level.
 *
 * @example
 * ```ts
 * const actions = new ActionSet({ tokenKeep: [0.1, 1], mlpInputKeep: [0.6, 1], activationBits: [5, 16] });
 * actions.size;          // 8
 * actions.action(0);     // { tokenKeep: 0.1, mlpInputKeep: 0.6, activationBits: 5 }
 * actions.usage(7);      // [1, 1, 1]
 * ```
 */
export class ActionSet {
  /** The validated levels, each axis ascending. */
  readonly levels: ActionLevels;
  /** Number of actions. */
  readonly size: number;
  /**
   * Axes whose levels are not just the dense one (κ = 1, ρ = 1, q = 16): the axes that count
   * in the net keep rate, in {@link AXES} order.
   */
  readonly enabled: readonly [boolean, boolean, boolean];

  /**
   * @throws LetheError `E_ARG` naming `levels.<axis>` for an empty or duplicated list, a bit
   *   width that is not an integer in [2, 16]; `E_BUDGET` naming it for a rate outside (0, 1].
   */
  constructor(levels: ActionLevels) {
    if (typeof levels !== 'object' || levels === null) {
      throw new LetheError('E_ARG', 'must be an object of per-axis levels', 'levels');
    }
    this.levels = Object.freeze({
      tokenKeep: checkRates(levels.tokenKeep, 'levels.tokenKeep'),
      mlpInputKeep: checkRates(levels.mlpInputKeep, 'levels.mlpInputKeep'),
      activationBits: checkBits(levels.activationBits, 'levels.activationBits'),
    });
    const { tokenKeep, mlpInputKeep, activationBits } = this.levels;
    this.size = tokenKeep.length * mlpInputKeep.length * activationBits.length;
    this.enabled = [
      !isOnly(tokenKeep, 1),
      !isOnly(mlpInputKeep, 1),
      !isOnly(activationBits, FULL_PRECISION_BITS),
    ];
  }

  /**
   * The knobs of action `a`.
   *
   * @throws LetheError `E_ARG` naming `action` unless `a` is an integer in [0, size).
   */
  action(a: number): SolAction {
    this.checkIndex(a);
    const { tokenKeep, mlpInputKeep, activationBits } = this.levels;
    const bits = a % activationBits.length;
    const rest = (a - bits) / activationBits.length;
    const prune = rest % mlpInputKeep.length;
    const token = (rest - prune) / mlpInputKeep.length;
    return {
      tokenKeep: tokenKeep[token]!,
      mlpInputKeep: mlpInputKeep[prune]!,
      activationBits: activationBits[bits]!,
    };
  }

  /** `[κ, ρ, q/16]` of action `a`. @throws LetheError `E_ARG` naming `action`. */
  usage(a: number): AxisUsage {
    const { tokenKeep, mlpInputKeep, activationBits } = this.action(a);
    return [tokenKeep, mlpInputKeep, activationBits / FULL_PRECISION_BITS];
  }

  /**
   * The index of the action with exactly these knobs.
   *
   * @throws LetheError `E_ARG` naming the axis whose value is not one of its levels.
   */
  indexOf(action: SolAction): number {
    const find = (levels: readonly number[], value: number, axis: string) => {
      const i = levels.indexOf(value);
      if (i < 0) throw new LetheError('E_ARG', `${value} is not a level of this action set`, axis);
      return i;
    };
    const { tokenKeep, mlpInputKeep, activationBits } = this.levels;
    const token = find(tokenKeep, action.tokenKeep, 'action.tokenKeep');
    const prune = find(mlpInputKeep, action.mlpInputKeep, 'action.mlpInputKeep');
    const bits = find(activationBits, action.activationBits, 'action.activationBits');
    return (token * mlpInputKeep.length + prune) * activationBits.length + bits;
  }

  private checkIndex(a: number): void {
    if (!(Number.isInteger(a) && a >= 0 && a < this.size)) {
      throw new LetheError('E_ARG', `must be an integer in [0, ${this.size}), got ${a}`, 'action');
    }
  }
}

function checkList(values: readonly number[], argument: string): number[] {
  if (!Array.isArray(values) || values.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of levels', argument);
  }
  const sorted = [...values].sort((a, b) => a - b);
  sorted.forEach((value, i) => {
    if (i > 0 && value === sorted[i - 1]) {
      throw new LetheError('E_ARG', `repeats the level ${value}`, argument);
    }
  });
  return sorted;
}

function checkRates(values: readonly number[], argument: string): readonly number[] {
  const sorted = checkList(values, argument);
  for (const value of sorted) {
    if (!(typeof value === 'number' && value > 0 && value <= 1)) {
      throw new LetheError('E_BUDGET', `levels must be in (0, 1], got ${value}`, argument);
    }
  }
  return Object.freeze(sorted);
}

function checkBits(values: readonly number[], argument: string): readonly number[] {
  const sorted = checkList(values, argument);
  for (const value of sorted) {
    if (!(Number.isInteger(value) && value >= 2 && value <= FULL_PRECISION_BITS)) {
      throw new LetheError('E_ARG', `levels must be integers in [2, 16], got ${value}`, argument);
    }
  }
  return Object.freeze(sorted);
}

function isOnly(levels: readonly number[], dense: number): boolean {
  return levels.length === 1 && levels[0] === dense;
}
