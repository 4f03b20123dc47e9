import { assertInteger, LetheError } from '@lethe/core';
import type {
  ComputeNeeds,
  ComputePolicy,
  ControlledAxes,
  LayerControls,
  RandomSource,
  StepObservation,
} from '@lethe/kv-cache';
import { actionControlTable } from '../actions/action-controls';
import { ActionSet, type AxisUsage } from '../actions/action-set';
import { type BudgetTargets, targetVector } from '../budget/budget-targets';
import { EpisodeBudget } from '../budget/episode-budget';
import { greedyAction, sampleAction } from '../controller/action-choice';
import { NO_PREVIOUS_ACTION } from '../controller/controller-constants';
import type { ControllerEpisode } from '../controller/controller-episode';
import { SolController } from '../controller/sol-controller';

/** How the controller's action is chosen: greedily (evaluation, the default) or sampled. */
export type SolSampling = 'greedy' | { readonly temperature: number };

/** Options of {@link SolPolicy}. */
export interface SolPolicyOptions {
  /** The trained controller. */
  readonly controller: SolController;
  /** The action set it was trained on (`controller.config.actions` actions). */
  readonly actions: ActionSet;
  /** The requested per-axis budgets of this request. */
  readonly targets: BudgetTargets;
  /** Decode steps per episode, `T` (default 16; at most the controller's `maxHorizon`). */
  readonly horizon?: number;
  /** Default `'greedy'`. */
  readonly sampling?: SolSampling;
  /**
   * Refresh the LM's KV entries of each episode densely once it ends (§4; default true): the
   * policy's `refreshEvery` is then `horizon`, and the runtime recomputes those entries without
   * resampling tokens. A runtime refuses it together with an eviction policy.
   */
  readonly refresh?: boolean;
  /**
   * Entries always read densely (sinks + recent window, default 4 + 2 as in the paper): a step
   * whose sequence holds no more counts as not effective (`1_eff = 0`, §4).
   */
  readonly alwaysDense?: number;
}

/** One sequence's memory: its controller episode, budget bookkeeping and previous action. */
export interface SolSequenceState {
  /** The controller's KV cache of the current episode. */
  readonly episode: ControllerEpisode;
  /** The current episode's budget bookkeeping. */
  budget: EpisodeBudget;
  /** The action of the previous step of this episode, or −1. */
  previousAction: number;
}

const NEEDS: ComputeNeeds = Object.freeze({ embedding: true });

/**
 * SOL as a compute policy (§4): before every decode step the controller reads the previous
 * step's final hidden state, the embedding of the token the step feeds, the budget features of
 * its episode and its previous action, and picks an action whose knobs (κ, ρ, q) apply to every
 * layer of the step (`tokenKeep`, `mlpInputKeep`, `activationBits`; a dense knob is left unset).
 * Every `horizon` steps an episode ends: the runtime refreshes those steps' KV entries densely
 * ({@link SolPolicy.refreshEvery}, unless `refresh: false`) and the controller starts a new
 * episode with a fresh cache of its own.
 */
export class SolPolicy implements ComputePolicy<SolSequenceState> {
  readonly name = 'sol';
  readonly needs = NEEDS;
  /** The knobs its action set varies (`ActionSet.enabled`). */
  readonly axes: ControlledAxes;
  /** Episode length `T`: decode steps between two resets of the controller. */
  readonly horizon: number;
  /** `horizon` when episodes end with a dense KV refresh (the default), else undefined. */
  readonly refreshEvery: number | undefined;
  private readonly controller: SolController;
  private readonly actions: ActionSet;
  private readonly targets: AxisUsage;
  private readonly sampling: SolSampling;
  private readonly alwaysDense: number;
  private readonly actionControls: readonly (LayerControls | undefined)[];

  /**
   * @throws LetheError `E_ARG` naming `controller` or `actions` when they are not a
   *   `SolController` and an `ActionSet` of the same size, `horizon` outside
   *   [1, maxHorizon], `alwaysDense` not an integer ≥ 0, `sampling.temperature` not finite and
   *   positive, `refresh` not a boolean; `E_ARG` naming `targets.<axis>` outside [0, 1].
   */
  constructor(options: SolPolicyOptions) {
    const { controller, actions } = options;
    if (!(controller instanceof SolController)) {
      throw new LetheError('E_ARG', 'must be a SolController', 'controller');
    }
    if (!(actions instanceof ActionSet) || actions.size !== controller.config.actions) {
      throw new LetheError(
        'E_ARG',
        `must be an ActionSet of the controller's ${controller.config.actions} actions`,
        'actions',
      );
    }
    this.controller = controller;
    this.actions = actions;
    const [tokenKeep, mlpInputKeep, activationBits] = actions.enabled;
    this.axes = Object.freeze({ tokenKeep, mlpInputKeep, activationBits });
    this.targets = targetVector(options.targets);
    this.horizon = assertInteger(options.horizon ?? 16, 'horizon', 1);
    if (this.horizon > controller.config.maxHorizon) {
      throw new LetheError(
        'E_ARG',
        `must be at most the controller's maxHorizon ${controller.config.maxHorizon}, got ${this.horizon}`,
        'horizon',
      );
    }
    this.sampling = checkSampling(options.sampling ?? 'greedy');
    if (options.refresh !== undefined && typeof options.refresh !== 'boolean') {
      throw new LetheError('E_ARG', `must be a boolean, got ${String(options.refresh)}`, 'refresh');
    }
    this.refreshEvery = (options.refresh ?? true) ? this.horizon : undefined;
    this.alwaysDense = assertInteger(options.alwaysDense ?? 6, 'alwaysDense', 0);
    this.actionControls = actionControlTable(actions);
  }

  /** A fresh sequence: a new episode, no previous action. */
  createState(): SolSequenceState {
    return {
      episode: this.controller.newEpisode(),
      budget: new EpisodeBudget(this.horizon, this.targets),
      previousAction: NO_PREVIOUS_ACTION,
    };
  }

  /**
   * Chooses this step's action and returns its controls for every layer.
   *
   * @throws LetheError `E_STATE` naming `state` without a state from {@link createState};
   *   `E_ARG` naming `observation.embedding` when the runtime did not provide it; the
   *   controller's errors for inputs of the wrong size or non-finite values.
   */
  controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: SolSequenceState,
  ): readonly (LayerControls | undefined)[] {
    if (state === undefined) {
      throw new LetheError('E_STATE', 'SolPolicy needs the state of createState()', 'state');
    }
    if (observation.embedding === undefined) {
      throw new LetheError(
        'E_ARG',
        'is missing: SolPolicy needs { embedding: true }',
        'observation.embedding',
      );
    }
    if (state.budget.done) this.startEpisode(state);
    const effective = observation.step > this.alwaysDense;
    const { logits } = this.controller.step(state.episode, {
      hidden: observation.hidden,
      embedding: observation.embedding,
      budget: state.budget.features(effective),
      previousAction: state.previousAction,
    });
    const action =
      this.sampling === 'greedy'
        ? greedyAction(logits)
        : sampleAction(logits, rng, this.sampling.temperature);
    state.budget.record(this.actions.usage(action), effective);
    state.previousAction = action;
    const controls = this.actionControls[action];
    return Array.from({ length: observation.livePerLayer.length }, () => controls);
  }

  private startEpisode(state: SolSequenceState): void {
    state.episode.reset();
    state.budget = new EpisodeBudget(this.horizon, this.targets);
    state.previousAction = NO_PREVIOUS_ACTION;
  }
}

function checkSampling(sampling: SolSampling): SolSampling {
  if (sampling === 'greedy') return sampling;
  const temperature = (sampling as { temperature?: unknown } | null)?.temperature;
  if (!(typeof temperature === 'number' && Number.isFinite(temperature) && temperature > 0)) {
    throw new LetheError(
      'E_ARG',
      `must be 'greedy' or { temperature } with a finite temperature > 0, got ${String(temperature)}`,
      'sampling.temperature',
    );
  }
  return sampling;
}
