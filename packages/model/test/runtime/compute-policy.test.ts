import type { ComputePolicy, LayerControls, StepObservation } from '@lethe/kv-cache';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { GenerationSession, generate } from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const prompt = Int32Array.from([1, 5, 9, 2, 7]);

/** A compute policy that returns fixed controls for every layer and records what it saw. */
class FixedControls implements ComputePolicy {
  readonly name = 'fixed-controls-test';
  readonly seen: StepObservation[] = [];
  constructor(private readonly perLayer: LayerControls | undefined) {}
  controls(observation: StepObservation): readonly (LayerControls | undefined)[] {
    this.seen.push({
      ...observation,
      hidden: observation.hidden.slice(),
      livePerLayer: observation.livePerLayer.slice(),
    });
    return Array.from({ length: config.num_hidden_layers }, () => this.perLayer);
  }
}

describe('generate with a compute policy', () => {
  let model: ReturnType<typeof lively>;
  let base: Parameters<typeof generate>[0];
  beforeAll(() => {
    model = lively(config, 5);
    base = { model, prompts: [prompt], maxNewTokens: 8, seed: 3, sampling: { temperature: 1 } };
  });

  it('neutral controls (dense, keep all channels) reproduce the policy-free run exactly', async () => {
    const plain = await generate(base);
    for (const controls of [undefined, { mlpKeep: 1 }, { activationBits: 16 }]) {
      const r = await generate({ ...base, compute: new FixedControls(controls) });
      expect(Array.from(r.tokens[0]!)).toEqual(Array.from(plain.tokens[0]!));
      if (controls?.activationBits === undefined)
        expect(Array.from(r.logProbs[0]!)).toEqual(Array.from(plain.logProbs[0]!));
    }
  });

  it('controls reach the model: 2-bit activations and 25% MLP channels change the distribution', async () => {
    const plain = await generate(base);
    for (const controls of [{ activationBits: 2 }, { mlpKeep: 0.25 }]) {
      const r = await generate({ ...base, compute: new FixedControls(controls) });
      const differs = r.logProbs[0]!.some((lp, i) => Math.abs(lp - plain.logProbs[0]![i]!) > 1e-4);
      expect(differs).toBe(true);
    }
  });

  it('observes the step, the previous hidden state and the live entries before each step', async () => {
    const policy = new FixedControls(undefined);
    const session = new GenerationSession({ model, compute: policy });
    const first = await session.prefill([prompt]);
    const second = await session.step([0], Int32Array.of(4));
    await session.step([0], Int32Array.of(6));
    expect(policy.seen.map((o) => o.step)).toEqual([prompt.length, prompt.length + 1]);
    expect(Array.from(policy.seen[0]!.hidden)).toEqual(Array.from(first.hidden[0]!));
    expect(Array.from(policy.seen[1]!.hidden)).toEqual(Array.from(second.hidden[0]!));
    const liveFirst = config.num_key_value_heads * prompt.length;
    expect(Array.from(policy.seen[0]!.livePerLayer)).toEqual([liveFirst, liveFirst]);
  });
});
