import { PolicyRegistry } from '@lethe/kv-cache';
import { DecoderModel, defaultConfig, generate, policyContextOf } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOL_BASELINE_PROVIDERS } from '../../src/baselines/baseline-providers';

const config = defaultConfig({
  model_type: 'llama',
  vocab_size: 19,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 256,
});

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = DecoderModel.random(config, 3);
});
afterAll(() => model.dispose());

const registry = new PolicyRegistry(SOL_BASELINE_PROVIDERS);
const targets = { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 };
const prompts = [0, 1].map((b) =>
  Int32Array.from({ length: 20 }, (_, i) => (3 * i + 5 * b) % config.vocab_size),
);

/** Greedy decoding of `list` (stream ids `ids`) under the provider's policy, 16 decode steps. */
async function run(name: string, list: readonly Int32Array[], ids: readonly number[]) {
  const prepared = await registry.prepare(name);
  const { compute } = prepared.build({ targets }, policyContextOf(model, list.length));
  const result = await generate({
    model,
    prompts: list,
    streamIds: ids,
    maxNewTokens: 17,
    sampling: { temperature: 0 },
    seed: 5,
    compute,
  });
  return {
    tokens: result.tokens.map((t) => Array.from(t)),
    usage: result.stats.compute,
    refreshes: result.stats.refreshes,
  };
}

describe.each(SOL_BASELINE_PROVIDERS.map((p) => [p.name]))('%s in generate()', (name) => {
  it('runs every decode step under its controls; a sequence alone equals it in the batch', async () => {
    const batch = await run(name, prompts, [0, 1]);
    for (const [b, usage] of batch.usage.entries()) {
      expect(usage.steps).toBe(16);
      // one 16-step episode, then its dense refresh
      expect(batch.refreshes[b]).toBe(1);
      if (name === 'sol-emc' || name === 'sol-dac') {
        // steered (2L; all steps effective): within (level gap) / 16 of the targets
        expect(Math.abs(usage.tokenKeep - 0.5)).toBeLessThanOrEqual(0.9 / 16 + 1e-6);
        expect(Math.abs(usage.mlpInputKeep - 0.8)).toBeLessThanOrEqual(0.4 / 16 + 1e-6);
        expect(Math.abs(usage.precision - 0.6)).toBeLessThanOrEqual(11 / 16 / 16 + 1e-6);
      }
    }
    const alone = await run(name, [prompts[1]!], [1]);
    expect(alone.tokens[0]).toEqual(batch.tokens[1]);
    expect(alone.usage[0]).toEqual(batch.usage[1]);
  });
});
