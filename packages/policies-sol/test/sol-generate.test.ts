import { DecoderModel, defaultConfig, generate } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ActionSet,
  controllerConfig,
  initControllerParameters,
  presetLevels,
  SolController,
  SolPolicy,
  type SolSequenceState,
} from '../src/index';

beforeAll(async () => {
  await initBackend('wasm');
});

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

describe('SolPolicy in generate', () => {
  it('steers every decode step; the runtime records the controller’s realised usage', async () => {
    const model = DecoderModel.random(config, 3);
    const actions = new ActionSet(presetLevels('3L'));
    const controller = new SolController(
      initControllerParameters(
        controllerConfig({ inputSize: config.hidden_size, actions: actions.size }),
        { seed: 5 },
      ),
    );
    const states: SolSequenceState[] = [];
    const policy = new SolPolicy({
      controller,
      actions,
      targets: { tokenKeep: 0.5, mlpInputKeep: 0.7, precision: 0.6 },
      horizon: 32,
      refresh: false,
      sampling: { temperature: 1.3 },
    });
    const tracked = Object.assign(Object.create(policy) as SolPolicy, {
      createState: () => {
        const state = policy.createState();
        states.push(state);
        return state;
      },
    });
    const prompt = Int32Array.from({ length: 24 }, (_, i) => (3 * i) % config.vocab_size);
    const run = () =>
      generate({ model, prompts: [prompt, prompt], maxNewTokens: 9, seed: 7, compute: tracked });
    const first = await run();
    expect(states.length).toBe(2);
    first.stats.compute.forEach((usage, b) => {
      expect(usage.steps).toBe(8);
      const realised = states[b]!.budget.realised()!;
      expect(usage.tokenKeep).toBeCloseTo(realised[0], 6);
      expect(usage.mlpInputKeep).toBeCloseTo(realised[1], 6);
      expect(usage.precision).toBeCloseTo(realised[2], 6);
    });
    // sampled actions vary, so the run is not the dense one; the same seed repeats it
    expect(first.stats.compute.some((u) => u.tokenKeep < 1 || u.precision < 1)).toBe(true);
    const again = await run();
    expect(again.tokens.map((t) => Array.from(t))).toEqual(first.tokens.map((t) => Array.from(t)));
    expect(again.stats.compute).toEqual(first.stats.compute);
    expect(first.stats.refreshes).toEqual([0, 0]);
    model.dispose();
  });

  it('ends each episode with a dense KV refresh by default', async () => {
    const model = DecoderModel.random(config, 4);
    const actions = new ActionSet(presetLevels('2L'));
    const controller = new SolController(
      initControllerParameters(
        controllerConfig({ inputSize: config.hidden_size, actions: actions.size }),
        { seed: 6 },
      ),
    );
    const policy = new SolPolicy({
      controller,
      actions,
      targets: { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.5 },
      horizon: 4,
    });
    expect(policy.refreshEvery).toBe(4);
    const prompt = Int32Array.from({ length: 20 }, (_, i) => (5 * i) % config.vocab_size);
    const r = await generate({ model, prompts: [prompt], maxNewTokens: 10, compute: policy });
    // 9 decode steps: episodes end after steps 4 and 8
    expect(r.stats.refreshes).toEqual([2]);
    expect(r.stats.compute[0]!.steps).toBe(9);
    model.dispose();
  });
});
