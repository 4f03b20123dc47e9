import { initBackend } from '@lethe/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectRollouts, type RolloutRequest } from '../../src/train/collect-rollouts';
import { evictionRateAt } from '../../src/train/curriculum';
import { groupRequests, type RolloutFunction, sampleGroupBatch } from '../../src/train/group-batch';
import { lossGradients } from '../../src/train/loss-gradients';
import type { NgcTask } from '../../src/train/ngc-task';
import { NgcTrainer } from '../../src/train/ngc-trainer';
import type { NgcRollout } from '../../src/train/rollout';
import { sharpModel, TINY_CONFIG, toyTrainerOptions } from './fixtures';

/** Examples are their own prompts; a completion's reward is its first token (as a number). */
const task: NgcTask<Int32Array> = {
  example: (step, index) => Int32Array.of(step, index),
  prompt: (example, rate) => Int32Array.of(...example, Math.round(rate * 100)),
  reward: (_, completion) => completion[0]!,
  stop: { eosTokenIds: [0] },
};

/** A rollout function that writes a chosen reward and length for each stream, recording its calls. */
function scripted(outcome: (stream: number) => { reward: number; length: number }) {
  const calls: { requests: readonly RolloutRequest[]; step: number }[] = [];
  const rollouts: RolloutFunction = async (requests, step) => {
    calls.push({ requests, step });
    return requests.map((request): NgcRollout => {
      const { reward, length } = outcome(request.stream);
      const tokens = new Int32Array(length).fill(7);
      tokens[0] = reward;
      return {
        prompt: request.prompt,
        tokens,
        tokenLogProbs: new Float32Array(length),
        finishReason: 'length',
        rounds: [],
        evictionRate: request.evictionRate,
        peakEntries: 0,
      };
    });
  };
  return { rollouts, calls };
}

describe('groupRequests', () => {
  it('asks G rollouts of each prompt, stream (step · P + i) · G + g, at the given rate', () => {
    fc.assert(
      fc.property(
        fc.nat(50),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 2, max: 5 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (step, promptsPerStep, groupSize, rate) => {
          const { requests, examples } = groupRequests(task, step, rate, {
            promptsPerStep,
            groupSize,
          });
          expect(examples).toEqual(
            Array.from({ length: promptsPerStep }, (_, i) => Int32Array.of(step, i)),
          );
          expect(requests).toHaveLength(promptsPerStep * groupSize);
          requests.forEach((request, k) => {
            const i = Math.floor(k / groupSize);
            const g = k % groupSize;
            expect(request.stream).toBe((step * promptsPerStep + i) * groupSize + g);
            expect(request.evictionRate).toBe(rate);
            expect([...request.prompt]).toEqual([step, i, Math.round(rate * 100)]);
          });
        },
      ),
    );
  });

  it('gives every rollout of a run its own stream', () => {
    const options = { promptsPerStep: 3, groupSize: 4 };
    const streams = Array.from({ length: 10 }, (_, step) =>
      groupRequests(task, step, 0.5, options).requests.map((r) => r.stream),
    ).flat();
    expect(new Set(streams).size).toBe(streams.length);
  });
});

describe('sampleGroupBatch', () => {
  const options = { promptsPerStep: 2, groupSize: 3, minLengthPenalty: true, cadence: 10 };
  // Prompts are 3 tokens long, so a completion of 6 tokens makes 9 < δ = 10: penalised.
  const outcome = (stream: number) => ({
    reward: [1, 0, 1, 1, 1, 0][stream % 6]!,
    length: stream % 6 === 2 ? 6 : 20,
  });

  it('scores the step, zeroes rollouts shorter than δ when it evicts, and centres each group', async () => {
    const { rollouts, calls } = scripted(outcome);
    const batch = await sampleGroupBatch(task, 4, 0.3, options, rollouts);
    expect(calls.map((c) => c.step)).toEqual([4]);
    expect(calls[0]!.requests.map((r) => r.stream)).toEqual([24, 25, 26, 27, 28, 29]);
    expect(batch.evictionRate).toBe(0.3);
    expect([...batch.rewards]).toEqual([1, 0, 1, 1, 1, 0]);
    expect([...batch.shaped]).toEqual([1, 0, 0, 1, 1, 0]);
    // Dr. GRPO: group means 1/3 and 2/3 subtracted, no division by the std.
    const expected = [2 / 3, -1 / 3, -1 / 3, 1 / 3, 1 / 3, -2 / 3];
    batch.advantages.forEach((a, k) => expect(a).toBeCloseTo(expected[k]!, 6));
  });

  it('applies no penalty at ε = 0 or without the option', async () => {
    for (const [rate, minLengthPenalty] of [
      [0, true],
      [0.3, false],
    ] as const) {
      const batch = await sampleGroupBatch(
        task,
        4,
        rate,
        { ...options, minLengthPenalty },
        scripted(outcome).rollouts,
      );
      expect([...batch.shaped]).toEqual([...batch.rewards]);
    }
  });

  it('names the rollout whose reward is not finite', async () => {
    const bad = {
      ...task,
      reward: (_: Int32Array, c: Int32Array) => (c[0] === 0 ? Number.NaN : 1),
    };
    await expect(
      sampleGroupBatch(bad, 4, 0.3, options, scripted(outcome).rollouts),
    ).rejects.toMatchObject({ code: 'E_ARG', argument: 'rewards[1]' });
  });
});

describe('sampleGroupBatch with a model', () => {
  const config = { ...TINY_CONFIG, vocab_size: 11 };

  it.each([
    ['evicting (ε = 0.5)', [0.5]],
    ['without eviction (ε = 0)', [1]],
  ])(
    "is the batch the trainer updates on, %s: its gradient norm is the trainer's first update's",
    async (_, retention) => {
      await initBackend('wasm');
      const trained = sharpModel(config, 5);
      const options = toyTrainerOptions(trained, {
        steps: 1,
        curriculum: { retention, stageSteps: 1, blend: 0.6 },
      });
      const trainer = new NgcTrainer(options);
      const { history } = await trainer.train();
      trainer.dispose();
      trained.dispose();

      const model = sharpModel(config, 5);
      const rate = evictionRateAt(options.curriculum, 0);
      const batch = await sampleGroupBatch(
        options.task,
        0,
        rate,
        { ...options, cadence: options.ngc.cadence },
        (requests) =>
          collectRollouts(requests, {
            model,
            ngc: options.ngc,
            maxNewTokens: options.maxNewTokens,
            temperature: options.temperature,
            stop: options.task.stop,
            seed: options.seed,
          }),
      );
      const split = lossGradients(model, batch.rollouts, batch.advantages, {
        temperature: options.temperature,
        logits: options.ngc.logits,
        microBatch: options.microBatch,
      });
      model.dispose();
      const first = history[0]!;
      expect(first.evictionRate).toBe(rate);
      expect(batch.advantages.some((a) => a !== 0)).toBe(true);
      expect(batch.rollouts.some((r) => r.rounds.length > 0)).toBe(rate > 0);
      expect(first.reward).toBeCloseTo(mean(batch.shaped), 12);
      expect(first.accuracy).toBeCloseTo(mean(batch.rewards), 12);
      expect(split.memoryNorm > 0).toBe(rate > 0);
      expect(Math.abs(split.totalNorm - first.gradNorm) / first.gradNorm).toBeLessThan(1e-4);
    },
  );
});

function mean(values: Float64Array): number {
  return values.reduce((sum, x) => sum + x, 0) / values.length;
}
