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
    for (const controls of [
      undefined,
      { mlpKeep: 1 },
      { mlpInputKeep: 1 },
      { activationBits: 16 },
    ]) {
      const r = await generate({ ...base, compute: new FixedControls(controls) });
      expect(Array.from(r.tokens[0]!)).toEqual(Array.from(plain.tokens[0]!));
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
    expect(policy.seen.map((o) => o.token)).toEqual([4, 6]);
    expect(policy.seen[0]!.embedding).toBeUndefined();
  });

  it('gives each sequence its own state and the token embedding when asked', async () => {
    const embedding = model.parameters.get('model.embed_tokens.weight')!.arraySync() as number[][];
    const seen: { sequence: number; token: number; embedding: number[]; calls: number }[] = [];
    const stateful: ComputePolicy<{ id: number; calls: number }> = {
      name: 'stateful-test',
      needs: { embedding: true },
      createState: (() => {
        let next = 0;
        return () => ({ id: next++, calls: 0 });
      })(),
      controls(observation, _rng, state) {
        state!.calls += 1;
        seen.push({
          sequence: state!.id,
          token: observation.token,
          embedding: Array.from(observation.embedding!),
          calls: state!.calls,
        });
        return [undefined, undefined];
      },
    };
    const session = new GenerationSession({ model, compute: stateful });
    await session.prefill([prompt, prompt.subarray(0, 3)]);
    await session.step([0, 1], Int32Array.of(4, 11));
    await session.step([1], Int32Array.of(2));
    expect(seen.map(({ sequence, token, calls }) => [sequence, token, calls])).toEqual([
      [0, 4, 1],
      [1, 11, 1],
      [1, 2, 2],
    ]);
    seen.forEach(({ token, embedding: row }) => {
      expect(row).toEqual(Array.from(Float32Array.from(embedding[token]!)));
    });
    await expect(session.step([0], Int32Array.of(23))).rejects.toThrow(/E_ARG.*tokens/);
  });

  it('gives the previous step’s logits when asked, and keeps them across a KV refresh', async () => {
    const seen: Float32Array[] = [];
    const observer: ComputePolicy = {
      name: 'logits-test',
      needs: { embedding: false, logits: true },
      refreshEvery: 1,
      controls(observation) {
        seen.push(observation.logits!.slice());
        return [undefined, undefined];
      },
    };
    const session = new GenerationSession({ model, compute: observer });
    const first = await session.prefill([prompt]);
    const second = await session.step([0], Int32Array.of(4));
    await session.step([0], Int32Array.of(6));
    expect(seen.map((l) => Array.from(l))).toEqual([
      Array.from(first.logits[0]!),
      Array.from(second.logits[0]!),
    ]);
    expect(session.refreshes).toEqual([2]);
  });

  it('records the realised per-axis averages of the controls', async () => {
    let step = 0;
    const alternating: ComputePolicy = {
      name: 'alternating-test',
      controls() {
        step += 1;
        return step % 2 === 1
          ? [{ tokenKeep: 0.5, mlpInputKeep: 0.25, activationBits: 8 }, undefined]
          : [undefined, undefined];
      },
    };
    const r = await generate({ ...base, maxNewTokens: 5, compute: alternating });
    // 4 decode steps (the first token comes from prefill): two with layer 0 compressed
    const usage = r.stats.compute[0]!;
    expect(usage.steps).toBe(4);
    expect(usage.tokenKeep).toBeCloseTo((2 * 0.75 + 2 * 1) / 4, 12);
    expect(usage.mlpInputKeep).toBeCloseTo((2 * 0.625 + 2 * 1) / 4, 12);
    expect(usage.precision).toBeCloseTo((2 * 0.75 + 2 * 1) / 4, 12);
    const plain = await generate({ ...base, maxNewTokens: 3 });
    expect(plain.stats.compute[0]).toEqual({
      steps: 0,
      tokenKeep: 1,
      mlpInputKeep: 1,
      precision: 1,
    });
  });
});
