import { initBackend, tf } from '@lethe/tensor';
import { expectLetheError, expectLetheRejection } from '@lethe/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GenerateOptions, GenerationSession, generate } from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';
import { RecentWindowPolicy } from './recent-window-policy';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });

describe('generate() prompts', () => {
  it('takes plain arrays of token ids as Int32Arrays (regression: an uncoded TypeError)', async () => {
    const model = lively(config, 41);
    const run = (prompts: GenerateOptions['prompts']) =>
      generate({
        model,
        prompts,
        maxNewTokens: 6,
        sampling: { temperature: 0.8 },
        seed: 3,
        prefillChunk: 2,
      });
    const typed = await run([Int32Array.of(1, 2, 3), Int32Array.of(4, 5)]);
    const plain = await run([[1, 2, 3], Int32Array.of(4, 5)]);
    expect(plain.tokens).toEqual(typed.tokens);
    expect(plain.logProbs).toEqual(typed.logProbs);
    expect(plain.stats.promptTokens).toBe(5);
    model.dispose();
  });

  it('refuses a prompt that is not token ids, naming prompts[i]', async () => {
    const model = lively(config, 41);
    for (const [bad, argument] of [
      [
        [
          [1, 2],
          [3, 1.5],
        ],
        'prompts[1]',
      ],
      [
        [
          [1, 2],
          [3, 23],
        ],
        'prompts[1]',
      ],
      [[[1, -1]], 'prompts[0]'],
      [[[1, 2 ** 32 + 1]], 'prompts[0]'],
      [['abc'], 'prompts[0]'],
      [[null], 'prompts[0]'],
      [[new Float32Array([1, 2])], 'prompts[0]'],
      [[[]], 'prompts[0]'],
      [[], 'prompts'],
      [null, 'prompts'],
      [Int32Array.of(1, 2), 'prompts'],
    ] as const) {
      await expectLetheRejection(
        generate({ model, prompts: bad as never, maxNewTokens: 2 }),
        'E_ARG',
        argument,
      );
    }
    model.dispose();
  });
});

describe('generate() and GenerationSession refuse options of the wrong kind with coded errors', () => {
  it('names the option instead of throwing a TypeError', async () => {
    const model = lively(config, 42);
    const base = { model, prompts: [Int32Array.of(1, 2)], maxNewTokens: 2 };
    const cases: [Record<string, unknown>, string][] = [
      [{ sampling: null }, 'sampling'],
      [{ sampling: { temperature: null } }, 'sampling.temperature'],
      [{ stop: null }, 'stop'],
      [{ stop: { eosTokenIds: 2 } }, 'stop.eosTokenIds'],
      [{ stop: { stopSequences: [null] } }, 'stop.stopSequences[0]'],
      [{ stop: { stopSequences: [[]] } }, 'stop.stopSequences[0]'],
      [{ stop: { stopSequences: [[30]] } }, 'stop.stopSequences[0]'],
      [{ stop: { stopSequences: 'ab' } }, 'stop.stopSequences'],
      [{ onToken: 5 }, 'onToken'],
      [{ onStep: 'x' }, 'onStep'],
      [{ forceToken: {} }, 'forceToken'],
      [{ now: 3 }, 'now'],
      [{ signal: {} }, 'signal'],
      [{ signal: null }, 'signal'],
      [{ model: null }, 'model'],
      [{ model: {} }, 'model'],
      [{ eviction: 5 }, 'eviction'],
      [{ eviction: null }, 'eviction'],
      [{ eviction: { shouldEvict: () => false, select: () => undefined } }, 'eviction.needs'],
      [{ compute: {} }, 'compute'],
      [{ createCache: null }, 'createCache'],
      [{ onPrefillChunk: 1 }, 'onPrefillChunk'],
      [{ onEvictionRound: 1 }, 'onEvictionRound'],
      [{ streamIds: 3 }, 'streamIds'],
      [{ streamIds: [null] }, 'streamIds[0]'],
      [{ maxNewTokens: null }, 'maxNewTokens'],
    ];
    const tensors = tf.memory().numTensors;
    for (const [options, argument] of cases) {
      await expectLetheRejection(generate({ ...base, ...options } as never), 'E_ARG', argument);
    }
    for (const options of [null, undefined, 5]) {
      await expectLetheRejection(generate(options as never), 'E_ARG');
    }
    await expectLetheRejection(generate(null as never), 'E_ARG', 'options');
    expect(() => new GenerationSession(null as never)).toThrow(/E_ARG.*options/);
    expectLetheError(
      () => new GenerationSession({ model, eviction: 5 } as never),
      'E_ARG',
      'eviction',
    );
    expect(tf.memory().numTensors).toBe(tensors);
    model.dispose();
  });

  it('a session step refuses sequences and tokens of the wrong kind', async () => {
    const model = lively(config, 43);
    const session = new GenerationSession({ model, eviction: new RecentWindowPolicy(8, 4, false) });
    await session.prefill([[1, 2, 3]]);
    await expectLetheRejection(session.step(0 as never, Int32Array.of(1)), 'E_ARG', 'sequences');
    await expectLetheRejection(session.step([0], [1] as never), 'E_ARG', 'tokens');
    expect(session.caches[0]!.length(0)).toBe(3);
    model.dispose();
  });
});
