import { DecoderModel, generate, resizeVocabulary } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { expectLetheError } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metaTokenHook } from '../src/meta-token';
import { NgcPolicy } from '../src/ngc-policy';
import { TINY_CONFIG, TINY_NGC } from './train/fixtures';

const META = TINY_CONFIG.vocab_size;
const cadence = TINY_NGC.cadence;
let model: DecoderModel;

beforeAll(async () => {
  await initBackend('wasm');
  const base = DecoderModel.random(TINY_CONFIG, 1);
  model = resizeVocabulary(base, META + 1);
  base.dispose();
});

afterAll(() => model.dispose());

/**
 * Generates the prompts under NGC with the meta-token hook and returns, per sequence, the
 * generated tokens, the indices the hook forced, and the steps of layer 0's rounds.
 */
async function run(
  prompts: Int32Array[],
  options: { prefillChunk?: number; maxNewTokens: number },
): Promise<{ tokens: Int32Array; forced: number[]; rounds: number[] }[]> {
  const hook = metaTokenHook(META, cadence, { prefillChunk: options.prefillChunk });
  const forced: number[][] = prompts.map(() => []);
  const rounds: number[][] = prompts.map(() => []);
  const result = await generate({
    model,
    prompts,
    maxNewTokens: options.maxNewTokens,
    prefillChunk: options.prefillChunk,
    sampling: { temperature: 1 },
    seed: 4,
    eviction: new NgcPolicy({ ...TINY_NGC, evictionRate: 0.5, mode: 'sample' }),
    forceToken: (event) => {
      const token = hook(event);
      if (token !== undefined) forced[event.sequence]!.push(event.index);
      return token;
    },
    onEvictionRound: ({ sequence, layer, step }) => {
      if (layer === 0) rounds[sequence]!.push(step);
    },
  });
  return prompts.map((_, b) => ({
    tokens: result.tokens[b]!,
    forced: forced[b]!,
    rounds: rounds[b]!,
  }));
}

const prompt = (length: number) => Int32Array.from({ length }, (_, i) => 1 + (i % 7));

describe('metaTokenHook (App. A.4)', () => {
  it('forces the meta-token exactly before every decode-time round, for any prompt length', async () => {
    const lengths = [1, 4, 5, 6, 7, 11, 13];
    const maxNewTokens = 30;
    const results = await run(lengths.map(prompt), { maxNewTokens });
    results.forEach(({ tokens, forced, rounds }, b) => {
      const P = lengths[b]!;
      expect(tokens).toHaveLength(maxNewTokens);
      // Rounds after prefill: the session's counter, written out (a prompt of ≥ δ: one at P).
      const first = P >= cadence ? P + cadence : cadence;
      const expected = [];
      for (let step = first; step <= P + maxNewTokens - 1; step += cadence) expected.push(step);
      const decodeRounds = rounds.filter((step) => step > P);
      expect(decodeRounds).toEqual(expected);
      expect(rounds.length - decodeRounds.length).toBe(P >= cadence ? 1 : 0);
      // The token appended just before each round (position step − 1) is the forced meta-token,
      // and the hook forced nothing else — except a last token, which no round follows.
      const beforeRounds = decodeRounds.map((step) => step - 1 - P);
      const trailing = forced.filter((i) => i === maxNewTokens - 1);
      expect(forced).toEqual([...beforeRounds, ...trailing]);
      for (const i of forced) expect(tokens[i]).toBe(META);
    });
    // Some sequences end on a forced token (s₀ + 30 ≡ 0 mod δ: every prompt of ≥ δ tokens).
    expect(results.some(({ forced }) => forced.includes(maxNewTokens - 1))).toBe(true);
  });

  it('follows the rounds of a chunked prefill', async () => {
    // δ = 6, chunks of 4: P = 10 has a round at 8 (counter 2 after the prompt), P = 3 none.
    const lengths = [10, 3, 12];
    const results = await run(lengths.map(prompt), { prefillChunk: 4, maxNewTokens: 20 });
    results.forEach(({ tokens, forced, rounds }, b) => {
      const P = lengths[b]!;
      const decodeRounds = rounds.filter((step) => step > P);
      expect(decodeRounds.length).toBeGreaterThanOrEqual(2);
      expect(forced.filter((i) => i < 19)).toEqual(decodeRounds.map((step) => step - 1 - P));
      for (const i of forced) expect(tokens[i]).toBe(META);
    });
    expect(results[0]!.rounds.slice(0, 2)).toEqual([8, 14]);
  });

  it('rejects bad arguments, naming them', () => {
    expectLetheError(() => metaTokenHook(-1, 6), 'E_ARG', 'metaToken');
    expectLetheError(() => metaTokenHook(1.5, 6), 'E_ARG', 'metaToken');
    expectLetheError(() => metaTokenHook(9, 0), 'E_ARG', 'cadence');
    expectLetheError(
      () => metaTokenHook(9, 6, { prefillChunk: 0 }),
      'E_ARG',
      'options.prefillChunk',
    );
  });
});
