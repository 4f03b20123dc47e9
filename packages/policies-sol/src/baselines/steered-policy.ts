import { assertInteger, LetheError } from '@lethe/core';
import type { LayerControls, RandomSource, StepObservation } from '@lethe/kv-cache';
import type { AxisUsage } from '../actions/action-set';
import { type BudgetTargets, targetVector } from '../budget/budget-targets';
import { SOL_DEFAULT_ALWAYS_DENSE } from '../policy/sol-provider';
import { type BaselineOptions, BaselinePolicy } from './baseline-policy';
import { steerAction } from './budget-steering';
import { SteeredEpisodeBudget } from './steered-budget';

/** Options of a budget-steered baseline (EMC, DAC). */
export interface SteeredOptions extends BaselineOptions {
  /** The requested per-axis budgets each episode's average is steered to. */
  readonly targets: BudgetTargets;
  /**
   * Entries always read densely (sinks + recent window, default 4 + 2 as in the paper): a step
   * whose sequence holds no more counts as not effective (`1_eff = 0`, §4), as in `SolPolicy`.
   */
  readonly alwaysDense?: number;
}

/** One sequence's memory: its episode's budget bookkeeping and the need score's own memory. */
export interface SteeredState<M> {
  /** The current episode's budget bookkeeping. */
  budget: SteeredEpisodeBudget;
  /** What the need score keeps between steps (DAC: the previous hidden state and embedding). */
  readonly memory: M;
}

/**
 * A hand-crafted compute schedule of the SOL paper's App. C: before every decode step a scalar
 * need score `u ∈ [0, 1]` from the previous step (EMC: entropy, DAC: drift) biases the action
 * toward more compute, while the greedy budget-steering rule ({@link steerAction}) keeps each
 * episode's average usage on the targets. Episodes follow `SolPolicy` exactly: `horizon` steps
 * each, the budget restarting with each (and the KV refresh after it unless `refresh: false`),
 * a step effective iff its position is past the `alwaysDense` entries, only effective steps
 * counting toward the average. Deterministic unless its need score draws from the random stream
 * (only {@link RandomSteeredPolicy}'s does).
 *
 * @typeParam M What the need score remembers per sequence.
 * @throws LetheError `E_ARG` from the constructor as `BaselinePolicy`'s, naming `alwaysDense`
 *   unless it is an integer ≥ 0, `targets.<axis>` for a target that is not a finite number in
 *   [0, 1].
 */
export abstract class SteeredPolicy<M> extends BaselinePolicy<SteeredState<M>> {
  private readonly targets: AxisUsage;
  private readonly alwaysDense: number;

  constructor(options: SteeredOptions) {
    super(options);
    this.targets = targetVector(options.targets);
    this.alwaysDense = assertInteger(
      options.alwaysDense ?? SOL_DEFAULT_ALWAYS_DENSE,
      'alwaysDense',
      0,
    );
  }

  /** A fresh sequence: a new episode, an empty memory. */
  createState(): SteeredState<M> {
    return { budget: this.newBudget(), memory: this.createMemory() };
  }

  /**
   * Scores the step's need, steers its action and returns its controls for every layer.
   *
   * @throws LetheError `E_STATE` naming `state` without a state from {@link createState}; the
   *   need score's errors for an observation it cannot read.
   */
  controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: SteeredState<M>,
  ): readonly (LayerControls | undefined)[] {
    if (state === undefined) {
      throw new LetheError('E_STATE', `${this.name} needs the state of createState()`, 'state');
    }
    if (state.budget.done) state.budget = this.newBudget();
    const need = this.need(observation, state.memory, state.budget.steps === 0, rng);
    const action = steerAction(this.actions, state.budget, need);
    state.budget.record(this.actions.usage(action), observation.step > this.alwaysDense);
    return this.controlsOf(action, observation);
  }

  /** A fresh memory for a new sequence. */
  protected abstract createMemory(): M;

  /**
   * The need score `u ∈ [0, 1]` of the step about to be taken, from what the previous step left
   * (higher spends more compute); updates `memory` for the next step.
   *
   * @param episodeStart whether this is the first step of an episode.
   * @param rng the sequence's random stream (only the random control draws from it).
   */
  protected abstract need(
    observation: StepObservation,
    memory: M,
    episodeStart: boolean,
    rng: RandomSource,
  ): number;

  private newBudget(): SteeredEpisodeBudget {
    return new SteeredEpisodeBudget(this.horizon, this.targets);
  }
}
