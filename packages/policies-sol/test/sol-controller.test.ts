import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ControllerEpisode, initControllerParameters, SolController } from '../src/index';
import { randomEpisodes, randomParameters, SMALL, stepEpisodes, stepInput } from './fixtures';

describe('SolController.step', () => {
  it('gives A logits and a value per step, and counts the episode steps', () => {
    const controller = new SolController(randomParameters(SMALL, 1));
    const batch = randomEpisodes(SMALL, 1, 3, 2);
    const episode = controller.newEpisode();
    expect(episode.steps).toBe(0);
    const out = controller.step(episode, stepInput(batch, 0, SMALL.inputSize));
    expect(out.logits).toBeInstanceOf(Float32Array);
    expect(out.logits.length).toBe(SMALL.actions);
    expect(Number.isFinite(out.value)).toBe(true);
    expect(episode.steps).toBe(1);
  });

  it('episodes are independent: interleaving sequences equals running each alone', () => {
    const controller = new SolController(randomParameters(SMALL, 3));
    const batch = randomEpisodes(SMALL, 3, 6, 4);
    const alone = stepEpisodes(controller, batch);
    const episodes = [0, 1, 2].map(() => controller.newEpisode());
    for (let t = 0; t < 6; t++) {
      for (const b of [2, 0, 1]) {
        const r = b * 6 + t;
        const out = controller.step(episodes[b]!, stepInput(batch, r, SMALL.inputSize));
        expect(out.logits).toEqual(alone.logits.subarray(r * 8, (r + 1) * 8));
        expect(out.value).toBe(alone.values[r]);
      }
    }
  });

  it('reset starts a new episode: the same outputs as a fresh state', () => {
    const controller = new SolController(randomParameters(SMALL, 5));
    const batch = randomEpisodes(SMALL, 2, 4, 6);
    const expected = stepEpisodes(controller, batch);
    const episode = controller.newEpisode();
    for (let b = 0; b < 2; b++) {
      episode.reset();
      for (let t = 0; t < 4; t++) {
        const r = b * 4 + t;
        expect(controller.step(episode, stepInput(batch, r, SMALL.inputSize)).logits).toEqual(
          expected.logits.subarray(r * 8, (r + 1) * 8),
        );
      }
    }
  });

  it('causality: changing step t changes no output of the steps before it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 0, max: 3 }), (t, field) => {
        const controller = new SolController(randomParameters(SMALL, 7));
        const batch = randomEpisodes(SMALL, 1, 8, 8);
        const before = stepEpisodes(controller, batch);
        const changed = {
          ...batch,
          hidden: batch.hidden.slice(),
          embedding: batch.embedding.slice(),
          budget: batch.budget.slice(),
          previousActions: batch.previousActions.slice(),
        };
        if (field === 0) changed.hidden[t * 8] = changed.hidden[t * 8]! + 5;
        if (field === 1) changed.embedding[t * 8 + 3] = 1;
        if (field === 2) changed.budget[t * 8 + 2] = changed.budget[t * 8 + 2]! + 0.5;
        if (field === 3) changed.previousActions[t] = (changed.previousActions[t]! + 1) % 8;
        const after = stepEpisodes(controller, changed);
        expect(after.logits.subarray(0, t * 8)).toEqual(before.logits.subarray(0, t * 8));
        expect(after.values.subarray(0, t)).toEqual(before.values.subarray(0, t));
        expect(after.logits.subarray(t * 8, (t + 1) * 8)).not.toEqual(
          before.logits.subarray(t * 8, (t + 1) * 8),
        );
      }),
      { numRuns: 20 },
    );
  });

  it('sees the LM features at unit scale: rescaling hidden or embedding changes nothing', () => {
    const controller = new SolController(randomParameters(SMALL, 9));
    const raw = randomEpisodes(SMALL, 2, 5, 10);
    // at unit scale, where the normalisation's ε = 1e-6 is negligible
    const batch = { ...raw, embedding: raw.embedding.map((v) => v * 20) };
    const expected = stepEpisodes(controller, batch);
    const scaled = stepEpisodes(controller, {
      ...batch,
      hidden: batch.hidden.map((v) => v * 64),
      embedding: batch.embedding.map((v) => v * 16),
    });
    for (let i = 0; i < expected.logits.length; i++) {
      expect(scaled.logits[i]).toBeCloseTo(expected.logits[i]!, 4);
    }
  });

  it('refuses a step past maxHorizon (E_STATE) and leaves the episode as it was', () => {
    const controller = new SolController(initControllerParameters({ ...SMALL, maxHorizon: 2 }));
    const batch = randomEpisodes(SMALL, 1, 3, 11);
    const episode = controller.newEpisode();
    controller.step(episode, stepInput(batch, 0, 8));
    controller.step(episode, stepInput(batch, 1, 8));
    expectLetheError(() => controller.step(episode, stepInput(batch, 2, 8)), 'E_STATE', 'episode');
    expect(episode.steps).toBe(2);
    episode.reset();
    expect(() => controller.step(episode, stepInput(batch, 0, 8))).not.toThrow();
  });

  it('checks the input: lengths (E_SHAPE), values and the previous action (E_ARG), the state', () => {
    const controller = new SolController(initControllerParameters(SMALL));
    const ok = stepInput(randomEpisodes(SMALL, 1, 1, 12), 0, 8);
    const episode = controller.newEpisode();
    const bad = (input: object, code: string, argument: string) =>
      expectLetheError(() => controller.step(episode, { ...ok, ...input }), code, argument);
    bad({ hidden: new Float32Array(7) }, 'E_SHAPE', 'input.hidden');
    bad({ embedding: new Float32Array(9) }, 'E_SHAPE', 'input.embedding');
    bad({ budget: new Float32Array(7) }, 'E_SHAPE', 'input.budget');
    bad({ hidden: undefined }, 'E_SHAPE', 'input.hidden');
    bad({ embedding: new Float32Array(8).fill(Number.NaN) }, 'E_ARG', 'input.embedding');
    bad(
      { budget: Float32Array.of(0, 1, 0, 0, 0, 0, 0, Number.POSITIVE_INFINITY) },
      'E_ARG',
      'input.budget',
    );
    for (const previousAction of [-2, 8, 0.5, Number.NaN]) {
      bad({ previousAction }, 'E_ARG', 'input.previousAction');
    }
    expect(episode.steps).toBe(0);
    const other = new SolController(initControllerParameters({ ...SMALL, maxHorizon: 4 }));
    expectLetheError(() => controller.step(other.newEpisode(), ok), 'E_ARG', 'episode');
    expectLetheError(() => controller.step(new ControllerEpisode(32, 16), ok), 'E_ARG', 'episode');
  });
});
