import { Rng } from '@lethe/core';
import type { StepObservation } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  ActionSet,
  BUDGET_FEATURES,
  EpisodeBudget,
  greedyAction,
  presetLevels,
  SolController,
  SolPolicy,
} from '../src/index';
import { randomParameters, SMALL } from './fixtures';

const actions = new ActionSet(presetLevels('2L'));
const targets = { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 };
const LAYERS = 3;

function observation(step: number, seed: number): StepObservation {
  const rng = new Rng(seed);
  return {
    step,
    token: step % 7,
    hidden: rng.normal(SMALL.inputSize),
    embedding: rng.normal(SMALL.inputSize),
    livePerLayer: new Int32Array(LAYERS).fill(2 * step),
  };
}

describe('SolPolicy', () => {
  it('runs the controller step by step, resets each episode and reports the action as controls', () => {
    const params = randomParameters(SMALL, 3);
    const policy = new SolPolicy({
      controller: new SolController(params),
      actions,
      targets,
      horizon: 4,
    });
    const mirror = new SolController(params);
    expect(policy.horizon).toBe(4);
    expect(policy.refreshEvery).toBe(4);
    expect(policy.axes).toEqual({ tokenKeep: true, mlpInputKeep: true, activationBits: true });
    const tokenOnly = new ActionSet({
      tokenKeep: [0.1, 1],
      mlpInputKeep: [1],
      activationBits: [16],
    });
    const controller = new SolController(randomParameters({ ...SMALL, actions: 2 }, 3));
    expect(new SolPolicy({ controller, actions: tokenOnly, targets }).axes).toEqual({
      tokenKeep: true,
      mlpInputKeep: false,
      activationBits: false,
    });
    expect(policy.needs.embedding).toBe(true);
    const state = policy.createState();
    const rng = new Rng(0);
    let episode = mirror.newEpisode();
    let budget = new EpisodeBudget(4, [0.5, 0.8, 0.6]);
    let previous = -1;
    for (let t = 0; t < 10; t++) {
      if (t % 4 === 0) {
        episode = mirror.newEpisode();
        budget = new EpisodeBudget(4, [0.5, 0.8, 0.6]);
        previous = -1;
      }
      const obs = observation(3 + t, t);
      const effective = obs.step > 6;
      const features = budget.features(effective);
      expect(features.length).toBe(BUDGET_FEATURES);
      const { logits } = mirror.step(episode, {
        hidden: obs.hidden,
        embedding: obs.embedding!,
        budget: features,
        previousAction: previous,
      });
      const expected = greedyAction(logits);
      budget.record(actions.usage(expected), effective);
      previous = expected;
      const controls = policy.controls(obs, rng, state);
      expect(controls.length).toBe(LAYERS);
      const action = actions.action(expected);
      const want =
        action.tokenKeep === 1 && action.mlpInputKeep === 1 && action.activationBits === 16
          ? undefined
          : {
              ...(action.tokenKeep < 1 ? { tokenKeep: action.tokenKeep } : {}),
              ...(action.mlpInputKeep < 1 ? { mlpInputKeep: action.mlpInputKeep } : {}),
              ...(action.activationBits < 16 ? { activationBits: action.activationBits } : {}),
            };
      for (const layer of controls) expect(layer).toEqual(want);
      expect(state.previousAction).toBe(expected);
      expect(state.budget.realised()).toEqual(budget.realised());
    }
  });

  it('sampling is deterministic for a seed and different states do not interfere', () => {
    const policy = new SolPolicy({
      controller: new SolController(randomParameters(SMALL, 4)),
      actions,
      targets,
      sampling: { temperature: 1.3 },
    });
    const run = (seed: number) => {
      const rng = new Rng(seed);
      const state = policy.createState();
      return Array.from({ length: 12 }, (_, t) => {
        policy.controls(observation(10 + t, t), rng, state);
        return state.previousAction;
      });
    };
    const first = run(1);
    expect(run(1)).toEqual(first);
    const other = policy.createState();
    policy.controls(observation(10, 99), new Rng(5), other);
    expect(run(1)).toEqual(first);
  });

  it('refuses bad options and a missing state or embedding', () => {
    const controller = new SolController(randomParameters(SMALL, 5));
    expectLetheError(
      () => new SolPolicy({ controller, actions: new ActionSet(presetLevels('3L')), targets }),
      'E_ARG',
      'actions',
    );
    expectLetheError(
      () => new SolPolicy({ controller, actions, targets, horizon: 17 }),
      'E_ARG',
      'horizon',
    );
    expectLetheError(
      () => new SolPolicy({ controller, actions, targets, horizon: 0 }),
      'E_ARG',
      'horizon',
    );
    expectLetheError(
      () => new SolPolicy({ controller, actions, targets: { ...targets, precision: 2 } }),
      'E_ARG',
      'targets.precision',
    );
    expectLetheError(
      () => new SolPolicy({ controller, actions, targets, sampling: { temperature: 0 } }),
      'E_ARG',
      'sampling.temperature',
    );
    const policy = new SolPolicy({ controller, actions, targets });
    expectLetheError(() => policy.controls(observation(9, 1), new Rng(0)), 'E_STATE', 'state');
    const { embedding: _, ...bare } = observation(9, 1);
    expectLetheError(
      () => policy.controls(bare, new Rng(0), policy.createState()),
      'E_ARG',
      'observation.embedding',
    );
  });
});
