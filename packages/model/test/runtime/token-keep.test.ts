import type { ComputePolicy, LayerControls } from '@lethe/kv-cache';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { GenerationSession, generate } from '../../src/runtime/index';
import { cacheFor, lively, randomTokens, takeLogits, tinyConfig } from '../decoder/helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const PAGE = 4;
const prompt = randomTokens(3, 80, config.vocab_size);

/** A compute policy reading a fraction κ of the cache in every layer (SOL's token sparsity). */
class TokenKeep implements ComputePolicy {
  readonly name = 'token-keep-test';
  constructor(private readonly keepRate: number) {}
  controls(): readonly LayerControls[] {
    return Array.from({ length: config.num_hidden_layers }, () => ({ tokenKeep: this.keepRate }));
  }
}

describe('generate with tokenKeep', () => {
  it('reports the realised read fraction: about κ when sparse, exactly 1 when dense', async () => {
    const model = lively(config, 81);
    const base = { model, prompts: [prompt], maxNewTokens: 12, seed: 1, pageSize: PAGE };
    const dense = await generate(base);
    expect(dense.stats.reads[0]!.entries).toBe(dense.stats.reads[0]!.live);
    expect(dense.stats.reads[0]!.live).toBeGreaterThan(0);
    const sparse = await generate({ ...base, compute: new TokenKeep(0.25) });
    const { entries, live } = sparse.stats.reads[0]!;
    expect(live).toBe(dense.stats.reads[0]!.live);
    // b = ⌈κ·K⌉ with K ≈ 80–92 counts the anchors; whole pages of 4 round it up a little
    expect(entries / live).toBeGreaterThan(0.2);
    expect(entries / live).toBeLessThan(0.32);
    model.dispose();
  });

  it('passes the session read anchors to every step: tokens equal a decodeStep loop with them', async () => {
    const model = lively(config, 82);
    const readAnchors = { sinks: 2, window: 1 };
    const result = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: 8,
      sampling: { temperature: 0 },
      pageSize: PAGE,
      compute: new TokenKeep(0.3),
      readAnchors,
    });
    const cache = cacheFor(config, { pageSize: PAGE });
    const argmax = (row: Float32Array) => row.indexOf(Math.max(...row));
    let token = argmax(takeLogits(model.prefill([cache], [prompt]))[0]!);
    const tokens = [token];
    const controls = [new TokenKeep(0.3).controls()];
    while (tokens.length < 8) {
      const out = model.decodeStep([cache], Int32Array.of(token), controls, { readAnchors });
      token = argmax(takeLogits(out)[0]!);
      tokens.push(token);
    }
    expect(Array.from(result.tokens[0]!)).toEqual(tokens);
    model.dispose();
  });

  it('checks the session read anchors before anything runs', () => {
    const model = lively(config, 83);
    expect(() => new GenerationSession({ model, readAnchors: { window: -1 } })).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'readAnchors.window' }),
    );
    model.dispose();
  });
});
