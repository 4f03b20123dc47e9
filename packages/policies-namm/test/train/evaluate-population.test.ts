import { DecoderModel } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { evaluatePopulation } from '../../src/train/evaluate-population';
import type { NammEvaluationSettings } from '../../src/train/evaluation-settings';
import { generateCompletions } from '../../src/train/generate-completions';
import type { NammPromptRequest } from '../../src/train/prompt-request';
import { TINY_BAM, TINY_CONFIG, TINY_SETTINGS, toyTask } from './fixtures';

let model: DecoderModel;
beforeAll(async () => {
  await initBackend('wasm');
  model = DecoderModel.random(TINY_CONFIG, 3);
});
afterAll(() => model.dispose());

const task = toyTask('toy', 1);
const prompts = [0, 1, 2].map((i) => task.prompt(task.example(0, i)));
const settings: NammEvaluationSettings = TINY_SETTINGS;
const size = scorerParameterCount(TINY_BAM);
const evicting = Float64Array.from({ length: size }, (_, i) => Math.sin(7.1 * i) / 2);

describe('generateCompletions', () => {
  it('stops each sequence at its own limit and stop tokens, as if it ran alone', async () => {
    const requests: NammPromptRequest[] = [
      { prompt: prompts[0]!, maxNewTokens: 3, stop: {} },
      { prompt: prompts[1]!, maxNewTokens: 9, stop: {} },
      { prompt: prompts[2]!, maxNewTokens: 9, stop: { eosTokenIds: [9] } },
    ];
    const batch = await generateCompletions(model, requests);
    expect(batch.map((c) => c.tokens.length)).toEqual([3, 9, expect.any(Number)]);
    for (const [i, request] of requests.entries()) {
      expect(batch[i]).toEqual((await generateCompletions(model, [request]))[0]);
    }
    expect(batch[2]!.tokens.at(-1) === 9 || batch[2]!.tokens.length === 9).toBe(true);
  });
});

describe('evaluatePopulation', () => {
  const requests = prompts.map((prompt) => ({ prompt, maxNewTokens: 8, stop: {} }));

  it('runs the full cache for null, keeps everything with the zero genome, evicts with others', async () => {
    const [full, zero, member] = await evaluatePopulation(model, {
      genomes: [null, new Float64Array(size), evicting],
      requests,
      settings,
    });
    expect(full!.every((c) => c.liveRatio === 1 && c.peakRatio === 1)).toBe(true);
    expect(zero).toEqual(full);
    const mean = member!.reduce((s, c) => s + c.liveRatio, 0) / member!.length;
    expect(mean).toBeLessThan(1);
    expect(member!.every((c) => c.liveRatio <= c.peakRatio && c.peakRatio <= 1)).toBe(true);
  });

  it('names a bad genome or setting', async () => {
    const nan = evicting.slice();
    nan[4] = Number.NaN;
    await expectLetheRejection(
      evaluatePopulation(model, { genomes: [null, nan], requests, settings }),
      'E_ARG',
      'genomes[1]',
    );
    await expectLetheRejection(
      evaluatePopulation(model, {
        genomes: [null],
        requests,
        settings: { ...settings, capacity: 0 },
      }),
      'E_ARG',
      'capacity',
    );
  });
});
