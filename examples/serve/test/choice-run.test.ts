import type { BatchHandlers, BatchRequest, BatchResult, ContinuousBatcher } from '@lethe/model';
import { CharTokenizer } from '@lethe/model';
import { describe, expect, it } from 'vitest';
import { runChoice } from '../src/choice-run';
import type { ServedModel } from '../src/served-model';

/** A served model whose batch "generates" the given ids, to test what a choice makes of them. */
function servedWith(ids: readonly number[]): ServedModel {
  const tokenizer = CharTokenizer.fromText('ab ');
  const batcher = {
    submit: async (request: BatchRequest, handlers: BatchHandlers = {}): Promise<BatchResult> => {
      let count = 0;
      for (const token of ids) {
        count += 1;
        // logits that favour the token drawn, over a vocabulary a few ids past the tokenizer's
        const logits = new Float32Array(tokenizer.vocabSize + 4);
        logits[token] = 2;
        if (handlers.onToken?.({ token, index: count - 1, logProb: 0, logits }) === false) break;
      }
      return {
        tokens: Int32Array.from(ids.slice(0, count)),
        logProbs: new Float32Array(count),
        finishReason: count < ids.length ? 'callback' : 'length',
        promptTokens: (request.prompt as Int32Array).length,
        cache: {
          livePerLayer: Int32Array.of(1),
          peakPerLayer: Int32Array.of(1),
          peakTotal: 1,
          evictionRounds: Int32Array.of(0),
          evictedEntries: 0,
          fullCacheEntries: 1,
          realisedBudget: 1,
          reads: { entries: 0, live: 0 },
          refreshes: 0,
        },
      };
    },
  } as unknown as ContinuousBatcher;
  return {
    id: 'fake',
    model: {} as never,
    tokenizer,
    chat: undefined,
    encode: (text) => tokenizer.encode(text),
    stopTokens: [],
    maxPromptChars: 1_000,
    created: 0,
    capacity: 8,
    batcher,
  };
}

const request = {
  prompt: Int32Array.of(1),
  maxTokens: 8,
  sampling: { temperature: 0 },
  seed: 0,
  stop: [],
  policies: {},
  signal: new AbortController().signal,
};

describe('runChoice', () => {
  it('writes no text for ids past the tokenizer (a padded vocabulary) and keeps going', async () => {
    const served = servedWith([]);
    const [a, b] = Array.from(served.tokenizer.encode('ab'));
    const padded = served.tokenizer.vocabSize + 3;
    const pieces: string[] = [];
    const outcome = await runChoice(servedWith([a!, padded, b!]), request, (text) =>
      pieces.push(text),
    );
    expect(outcome.text).toBe('ab');
    expect(pieces.join('')).toBe('ab');
    expect(outcome.completionTokens).toBe(3);
    expect(outcome.finishReason).toBe('length');
  });

  it('ends at a stop sequence, which it does not return', async () => {
    const tokenizer = CharTokenizer.fromText('ab ');
    const ids = Array.from(tokenizer.encode('ab ba'));
    const outcome = await runChoice(servedWith(ids), { ...request, stop: [' '] }, () => {});
    expect(outcome).toMatchObject({ text: 'ab', finishReason: 'stop' });
  });

  it('logprobs: each piece carries its tokens’ entries; a stop sequence’s tokens have none', async () => {
    const tokenizer = CharTokenizer.fromText('ab ');
    const ids = Array.from(tokenizer.encode('ab ba'));
    const pieces: { text: string; tokens: string[] }[] = [];
    const outcome = await runChoice(
      servedWith(ids),
      { ...request, stop: [' b'], logprobs: 2 },
      (text, logprobs) => pieces.push({ text, tokens: logprobs.map((entry) => entry.token) }),
    );
    expect(outcome.text).toBe('ab');
    expect(outcome.logprobs!.map((entry) => entry.token)).toEqual(['a', 'b']);
    expect(pieces.flatMap((piece) => piece.tokens)).toEqual(['a', 'b']);
    expect(pieces.map((piece) => piece.text).join('')).toBe('ab');
    const [first] = outcome.logprobs!;
    // the drawn token has logit 2 against 0 for the other ids
    const others = tokenizer.vocabSize + 3;
    expect(first!.logprob).toBeCloseTo(2 - Math.log(Math.exp(2) + others), 9);
    expect(first!.top!.map((alternative) => alternative.token)[0]).toBe('a');
    expect(first!.offset).toBe(0);
    expect(outcome.logprobs![1]!.offset).toBe(1);
  });

  it('echo: the prompt text comes first; with max_tokens 0 nothing is generated', async () => {
    const pieces: string[] = [];
    const outcome = await runChoice(
      servedWith([1, 2]),
      { ...request, maxTokens: 0, echo: 'ba' },
      (text) => pieces.push(text),
    );
    expect(outcome).toMatchObject({ text: 'ba', completionTokens: 0, finishReason: 'length' });
    expect(pieces).toEqual(['ba']);
  });
});
