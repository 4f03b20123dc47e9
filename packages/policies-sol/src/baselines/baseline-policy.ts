import { assertInteger, LetheError } from '@lethe/core';
import type {
  ComputePolicy,
  ControlledAxes,
  LayerControls,
  RandomSource,
  StepObservation,
} from '@lethe/kv-cache';
import { actionControlTable } from '../actions/action-controls';
import { ActionSet } from '../actions/action-set';
import { SOL_DEFAULT_HORIZON } from '../policy/sol-provider';

/** Options every baseline schedule takes. */
export interface BaselineOptions {
  /** The discrete action set it picks from (the same as the SOL policy it is compared with). */
  readonly actions: ActionSet;
  /**
   * Decode steps per episode `T` (default 16): the KV refresh period and, for the steered
   * baselines, the span over which the targets are matched.
   */
  readonly horizon?: number;
  /**
   * Refresh the LM's KV entries of each episode densely once it ends (§4; default true), as
   * `SolPolicy` does: `refreshEvery` is then `horizon`.
   */
  readonly refresh?: boolean;
}

/**
 * What the SOL paper's non-learned compute schedules share with `SolPolicy`, so that a
 * comparison differs only in how actions are chosen: the action set and its per-action layer
 * controls (the same knobs on every layer, a dense knob left unset), the controlled `axes`
 * (`ActionSet.enabled`), the episode length and the periodic dense KV refresh.
 *
 * @throws LetheError `E_ARG` from the constructor naming `options` unless it is an object,
 *   `actions` unless it is an `ActionSet`, `horizon` unless it is an integer ≥ 1, `refresh`
 *   unless it is a boolean.
 */
export abstract class BaselinePolicy<S> implements ComputePolicy<S> {
  /** Method name (the provider's). */
  abstract readonly name: string;
  /** The knobs its action set varies (`ActionSet.enabled`). */
  readonly axes: ControlledAxes;
  /** Episode length `T`. */
  readonly horizon: number;
  /** `horizon` when episodes end with a dense KV refresh (the default), else undefined. */
  readonly refreshEvery: number | undefined;
  /** The action set it picks from. */
  protected readonly actions: ActionSet;
  private readonly actionControls: readonly (LayerControls | undefined)[];

  constructor(options: BaselineOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new LetheError('E_ARG', 'must be an object', 'options');
    }
    const { actions } = options;
    if (!(actions instanceof ActionSet)) {
      throw new LetheError('E_ARG', 'must be an ActionSet', 'actions');
    }
    this.actions = actions;
    const [tokenKeep, mlpInputKeep, activationBits] = actions.enabled;
    this.axes = Object.freeze({ tokenKeep, mlpInputKeep, activationBits });
    this.horizon = assertInteger(options.horizon ?? SOL_DEFAULT_HORIZON, 'horizon', 1);
    if (options.refresh !== undefined && typeof options.refresh !== 'boolean') {
      throw new LetheError('E_ARG', `must be a boolean, got ${String(options.refresh)}`, 'refresh');
    }
    this.refreshEvery = (options.refresh ?? true) ? this.horizon : undefined;
    this.actionControls = actionControlTable(actions);
  }

  /**
   * Controls for the next decode step, one entry per layer.
   *
   * @throws LetheError as the concrete schedule documents.
   */
  abstract controls(
    observation: StepObservation,
    rng: RandomSource,
    state?: S,
  ): readonly (LayerControls | undefined)[];

  /** The controls of `action` for every layer of the observed model. */
  protected controlsOf(
    action: number,
    observation: StepObservation,
  ): readonly (LayerControls | undefined)[] {
    const controls = this.actionControls[action];
    return Array.from({ length: observation.livePerLayer.length }, () => controls);
  }
}
