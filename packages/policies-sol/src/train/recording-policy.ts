import { LetheError } from '@lethe/core';
import type {
  ComputeNeeds,
  ComputePolicy,
  LayerControls,
  RandomSource,
  StepObservation,
} from '@lethe/kv-cache';
import { actionControlTable } from '../actions/action-controls';
import type { ActionSet, AxisUsage } from '../actions/action-set';
import { BUDGET_FEATURES, EpisodeBudget } from '../budget/episode-budget';
import { sampleAction } from '../controller/action-choice';
import { NO_PREVIOUS_ACTION } from '../controller/controller-constants';
import type { ControllerEpisode } from '../controller/controller-episode';
import type { SolController } from '../controller/sol-controller';
import { logProbabilityAt } from './log-probability';

/**
 * What one sampled schedule recorded, step by step (`T` steps, row-major): everything the
 * controller read, what it sampled and with which probability.
 */
export interface ScheduleSteps {
  /** The schedule's requested targets `[C_κ, C_ρ, C_η]`. */
  readonly targets: AxisUsage;
  /** The LM's final hidden state before each step, `[T, inputSize]`. */
  readonly hidden: Float32Array;
  /** The LM's input embedding of each step's token, `[T, inputSize]`. */
  readonly embedding: Float32Array;
  /** The budget features `s_t` of each step, `[T, 8]`. */
  readonly budget: Float32Array;
  /** The action before each step (−1 at the first), `[T]`. */
  readonly previousActions: Int32Array;
  /** The sampled action of each step, `[T]`. */
  readonly actions: Int32Array;
  /** `log π(a_t)` of each sampled action under `softmax(logits / temperature)` (float64), `[T]`. */
  readonly logProbs: Float64Array;
  /** 1 where the step counted toward the budget (`1_eff,t`), `[T]`. */
  readonly effective: Uint8Array;
}

/** One sequence's state in a {@link RecordingPolicy}: its episode, budget and records. */
export interface RecordingState {
  /** Index of the sequence (the order in which the runtime created the states). */
  readonly sequence: number;
  /** The controller's cache of this sequence's episode. */
  readonly episode: ControllerEpisode;
  /** The episode's budget bookkeeping. */
  readonly budget: EpisodeBudget;
  /** What the steps so far recorded (rows `< budget.steps` are written). */
  readonly steps: ScheduleSteps;
}

/** Options of a {@link RecordingPolicy}. */
export interface RecordingPolicyOptions {
  /** The controller to sample from (the current parameters). */
  readonly controller: SolController;
  /** Its action set (`controller.config.actions` actions; checked by the caller). */
  readonly actions: ActionSet;
  /** Steps of the single episode each sequence runs, `T` (≤ the controller's `maxHorizon`). */
  readonly horizon: number;
  /** The targets of each sequence, in the order the runtime creates their states. */
  readonly targets: readonly AxisUsage[];
  /** Sampling temperature (> 0). */
  readonly temperature: number;
  /** Entries always read densely: a step whose sequence holds no more is not effective. */
  readonly alwaysDense: number;
}

const NEEDS: ComputeNeeds = Object.freeze({ embedding: true });

/**
 * The compute policy of a training rollout (§4): exactly `SolPolicy`'s step — effective flag
 * `step > alwaysDense`, budget features, controller step on (hidden, embedding, `s_t`, previous
 * action), then the action's controls on every layer — except that the action is sampled at the
 * training temperature with the sequence's own random stream, and that every step is recorded
 * ({@link RecordingState.steps}). Each sequence runs one episode of `horizon` steps; there is
 * no `refreshEvery` (a rollout ends with its episode).
 */
export class RecordingPolicy implements ComputePolicy<RecordingState> {
  readonly name = 'sol-recording';
  readonly needs = NEEDS;
  /** The states created so far, by sequence index. */
  readonly states: RecordingState[] = [];
  private readonly options: RecordingPolicyOptions;
  private readonly actionControls: readonly (LayerControls | undefined)[];

  /** @param options checked by the caller (`counterfactualRollouts`). */
  constructor(options: RecordingPolicyOptions) {
    this.options = options;
    this.actionControls = actionControlTable(options.actions);
  }

  /**
   * A new sequence: a fresh controller episode and budget with the next sequence's targets.
   *
   * @throws LetheError `E_STATE` naming `targets` when every sequence already has a state.
   */
  createState(): RecordingState {
    const { controller, horizon, targets } = this.options;
    const sequence = this.states.length;
    if (sequence >= targets.length) {
      throw new LetheError(
        'E_STATE',
        `has ${targets.length} sequences, all of which have a state`,
        'targets',
      );
    }
    const width = controller.config.inputSize;
    const state: RecordingState = {
      sequence,
      episode: controller.newEpisode(),
      budget: new EpisodeBudget(horizon, targets[sequence]!),
      steps: {
        targets: targets[sequence]!,
        hidden: new Float32Array(horizon * width),
        embedding: new Float32Array(horizon * width),
        budget: new Float32Array(horizon * BUDGET_FEATURES),
        previousActions: new Int32Array(horizon),
        actions: new Int32Array(horizon),
        logProbs: new Float64Array(horizon),
        effective: new Uint8Array(horizon),
      },
    };
    this.states.push(state);
    return state;
  }

  /**
   * Samples and records this step's action and returns its controls for every layer.
   *
   * @throws LetheError `E_STATE` naming `state` without a state of {@link createState}, or when
   *   its episode has taken all `horizon` steps; `E_ARG` naming `observation.embedding` when the
   *   runtime did not provide it; the controller's and `sampleAction`'s errors.
   */
  controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: RecordingState,
  ): readonly (LayerControls | undefined)[] {
    if (state === undefined || !this.states.includes(state)) {
      throw new LetheError('E_STATE', 'needs a state of this policy’s createState()', 'state');
    }
    if (observation.embedding === undefined) {
      throw new LetheError(
        'E_ARG',
        'is missing: the policy needs { embedding: true }',
        'observation.embedding',
      );
    }
    const { budget, steps } = state;
    if (budget.done) {
      throw new LetheError(
        'E_STATE',
        `has taken all ${budget.horizon} steps of its episode`,
        'state',
      );
    }
    const { controller, actions, temperature, alwaysDense } = this.options;
    const t = budget.steps;
    const width = controller.config.inputSize;
    const effective = observation.step > alwaysDense;
    const features = budget.features(effective);
    const previousAction = t === 0 ? NO_PREVIOUS_ACTION : steps.actions[t - 1]!;
    const { logits } = controller.step(state.episode, {
      hidden: observation.hidden,
      embedding: observation.embedding,
      budget: features,
      previousAction,
    });
    const action = sampleAction(logits, rng, temperature);
    budget.record(actions.usage(action), effective);
    steps.hidden.set(observation.hidden, t * width);
    steps.budget.set(features, t * BUDGET_FEATURES);
    steps.embedding.set(observation.embedding, t * width);
    steps.previousActions[t] = previousAction;
    steps.actions[t] = action;
    steps.logProbs[t] = logProbabilityAt(logits, action, temperature);
    steps.effective[t] = effective ? 1 : 0;
    const controls = this.actionControls[action];
    return Array.from({ length: observation.livePerLayer.length }, () => controls);
  }
}
