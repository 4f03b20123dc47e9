// The request fields an OpenAI client or an evaluation tool sends: defaults and nulls accepted as
// the API accepts them, what stays unimplemented refused by name, and what is implemented —
// logprobs, echo (prompt scoring), penalties, logit_bias, top_k and min_p — checked against the
// model itself through the official client.
import { countdownTask, createTask, type PerplexityTask } from '@lethe/eval';
import { tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath, startServer, type TestServer } from './support';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    {
      countdown: repoPath('models/countdown'),
      lm: repoPath('models/lm'),
      qwen: repoPath('fixtures/hf/tiny-qwen2'),
    },
    // at most 6 sequences at once, queue included
    { maxSequences: 4, maxQueue: 2 },
  );
});
afterAll(() => server.app.close());

const prompt = countdownTask().example(0, 2).prompt;
const completion = { model: 'countdown', prompt, max_tokens: 12, temperature: 0 };
const chat = {
  model: 'qwen',
  messages: [{ role: 'user' as const, content: 'hello there' }],
  max_tokens: 8,
  temperature: 0,
};

/** The model's own log-probability of each token of `ids` after those before it (forward pass). */
function forwardLogProbs(model: string, ids: Int32Array): number[] {
  const served = server.models.get(model)!.model;
  return tf.tidy(() => {
    const logits = served.forward(tf.tensor2d(ids, [1, ids.length], 'int32')).logits;
    const logProbs = tf.logSoftmax(logits).arraySync() as number[][][];
    return Array.from(ids.subarray(1), (id, t) => logProbs[0]![t]![id]!);
  });
}

describe('defaults and nulls are accepted as the API accepts them', () => {
  it.each([
    ['presence_penalty: 0', { presence_penalty: 0 }],
    ['frequency_penalty: 0', { frequency_penalty: 0 }],
    ['logprobs: null', { logprobs: null }],
    ['echo: false', { echo: false }],
    ['best_of: 1', { best_of: 1 }],
    ['logit_bias: {}', { logit_bias: {} }],
    ['suffix: null', { suffix: null }],
    ['lethe: null', { lethe: null }],
    [
      'null optional fields',
      { top_p: null, n: null, stop: null, user: null, stream: null, stream_options: null },
    ],
    ['temperature: null is the default 1', { temperature: null, seed: 5 }, { temperature: 1 }],
  ] as [string, Record<string, unknown>, object?][])(
    'completions: %s',
    async (_, extra, same = {}) => {
      const seed = 'seed' in extra ? { seed: extra.seed } : {};
      const plain = await server.client.completions.create({
        ...completion,
        ...seed,
        ...same,
      } as never);
      const given = await server.client.completions.create({ ...completion, ...extra } as never);
      expect(given.choices[0]!.text).toBe(plain.choices[0]!.text);
    },
  );

  it.each([
    ['logprobs: false', { logprobs: false }],
    ['response_format text', { response_format: { type: 'text' } }],
    ['store: false', { store: false }],
    ['parallel_tool_calls: false', { parallel_tool_calls: false }],
    ['tools: []', { tools: [] }],
    ['tool_choice: "none"', { tool_choice: 'none' }],
    ['top_logprobs: 0', { top_logprobs: 0 }],
    ['lethe: null', { lethe: null }],
    [
      'null optional fields',
      {
        max_tokens: null,
        max_completion_tokens: 8,
        presence_penalty: null,
        logit_bias: null,
        response_format: null,
      },
    ],
  ])('chat: %s', async (_, extra) => {
    const plain = await server.client.chat.completions.create(chat);
    const given = await server.client.chat.completions.create({ ...chat, ...extra } as never);
    expect(given.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
  });

  it.each([
    ['completions', { ...completion, best_of: 3 }, 'best_of'],
    ['completions', { ...completion, suffix: 'end' }, 'suffix'],
    ['chat', { ...chat, response_format: { type: 'json_object' } }, 'response_format'],
    ['chat', { ...chat, store: true }, 'store'],
    ['chat', { ...chat, tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
    ['chat', { ...chat, tool_choice: 'required' }, 'tool_choice'],
    ['chat', { ...chat, audio: { voice: 'x' } }, 'audio'],
  ])('%s: what is not implemented is refused by name (%#)', async (endpoint, body, param) => {
    const create =
      endpoint === 'chat'
        ? server.client.chat.completions.create(body as never)
        : server.client.completions.create(body as never);
    await expect(create).rejects.toMatchObject({
      status: 400,
      param,
      code: 'unsupported_parameter',
    });
  });
});

describe('logprobs', () => {
  it('chat: each token’s logprob is the model’s, with its top alternatives; streamed the same', async () => {
    const whole = await server.client.chat.completions.create({
      ...chat,
      logprobs: true,
      top_logprobs: 3,
    });
    const content = whole.choices[0]!.logprobs!.content!;
    expect(content.length).toBe(whole.usage!.completion_tokens);
    for (const entry of content) {
      expect(entry.top_logprobs.length).toBe(3);
      // greedy: the token drawn is the most likely one
      expect(entry.logprob).toBeCloseTo(entry.top_logprobs[0]!.logprob, 6);
      expect(entry.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(entry.top_logprobs[1]!.logprob);
      expect(entry.bytes).toEqual(Array.from(Buffer.from(entry.token)));
    }
    const stream = await server.client.chat.completions.create({
      ...chat,
      logprobs: true,
      top_logprobs: 3,
      stream: true,
    });
    const streamed: typeof content = [];
    for await (const chunk of stream) streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    expect(streamed).toEqual(content);
  });

  it('completions: logprobs of the generated text, and echo scores the prompt as the model does', async () => {
    const model = 'lm';
    const text = (createTask('lm') as PerplexityTask).document(0, 4).slice(0, 48);
    const scored = await server.client.completions.create({
      model,
      prompt: text,
      max_tokens: 0,
      echo: true,
      logprobs: 1,
    });
    const choice = scored.choices[0]!;
    expect(choice.text).toBe(text);
    expect(scored.usage!.completion_tokens).toBe(0);
    const logprobs = choice.logprobs!;
    const ids = server.models.get(model)!.encode(text, 'completion');
    expect(logprobs.tokens!.length).toBe(ids.length);
    expect(logprobs.token_logprobs![0]).toBeNull();
    const reference = forwardLogProbs(model, ids);
    logprobs.token_logprobs!.slice(1).forEach((logprob, t) => {
      expect(logprob).toBeCloseTo(reference[t]!, 3);
    });
    expect(logprobs.text_offset![0]).toBe(0);
    expect(logprobs.tokens!.join('')).toBe(text);
    // echo and generation together: the prompt's entries, then the generated ones
    const both = await server.client.completions.create({
      model,
      prompt: text,
      max_tokens: 5,
      temperature: 0,
      echo: true,
      logprobs: 2,
    });
    const all = both.choices[0]!.logprobs!;
    expect(all.tokens!.length).toBe(ids.length + 5);
    expect(both.choices[0]!.text.startsWith(text)).toBe(true);
    expect(all.text_offset![ids.length]).toBe(text.length);
  });

  it('echo under a policy scores the prompt as that policy’s cache held it', async () => {
    const text = (createTask('lm') as PerplexityTask).document(0, 5).slice(0, 120);
    const score = async (lethe: object) => {
      const response = await server.client.completions.create({
        model: 'lm',
        prompt: text,
        max_tokens: 0,
        echo: true,
        logprobs: 0,
        lethe,
      } as never);
      return response.choices[0]!.logprobs!.token_logprobs!.slice(1) as number[];
    };
    const full = await score({ policy: 'full' });
    const evicting = await score({ policy: 'streaming-llm', budget: 0.25, options: { sinks: 2 } });
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    // a quarter of the cache loses information: the prompt is less likely under it
    expect(sum(evicting)).toBeLessThan(sum(full));
  });
});

describe('sampling controls', () => {
  it('logit_bias −100 bans a token, +100 forces it', async () => {
    const served = server.models.get('countdown')!;
    const plain = await server.client.completions.create(completion);
    const first = served.encode(plain.choices[0]!.text, 'completion')[0]!;
    const banned = await server.client.completions.create({
      ...completion,
      logit_bias: { [String(first)]: -100 },
    });
    expect(served.encode(banned.choices[0]!.text, 'completion')).not.toContain(first);
    const forced = await server.client.completions.create({
      ...completion,
      max_tokens: 4,
      logit_bias: { '7': 100 },
    });
    expect(Array.from(served.encode(forced.choices[0]!.text, 'completion'))).toEqual([7, 7, 7, 7]);
  });

  it('a frequency penalty breaks repetition; top_k 1 and min_p 1 are greedy at any temperature', async () => {
    const served = server.models.get('countdown')!;
    const forced = await server.client.completions.create({
      ...completion,
      max_tokens: 6,
      logit_bias: { '7': 5 },
      frequency_penalty: 2,
    });
    const ids = Array.from(served.encode(forced.choices[0]!.text, 'completion'));
    expect(ids.filter((id) => id === 7).length).toBeLessThan(6);
    const greedy = await server.client.completions.create(completion);
    for (const extra of [{ top_k: 1 }, { min_p: 1 }]) {
      const sampled = await server.client.completions.create({
        ...completion,
        temperature: 1.5,
        seed: 3,
        ...extra,
      } as never);
      expect(sampled.choices[0]!.text).toBe(greedy.choices[0]!.text);
    }
  });

  it('a logit_bias key past the vocabulary is refused naming it', async () => {
    await expect(
      server.client.completions.create({ ...completion, logit_bias: { '99999': 1 } }),
    ).rejects.toMatchObject({ status: 400, param: 'logit_bias.99999' });
  });
});

describe('error bodies name request fields only', () => {
  it('n more than the server could ever run is a 400 naming n', async () => {
    await expect(
      server.client.completions.create({ ...completion, n: 4, prompt: [prompt, prompt] }),
    ).rejects.toMatchObject({ status: 400, param: 'prompt' });
    await expect(
      server.client.chat.completions.create({ ...chat, n: 7, max_tokens: 2 }),
    ).rejects.toMatchObject({ status: 400, param: 'n' });
    const six = await server.client.chat.completions.create({ ...chat, n: 6, max_tokens: 2 });
    expect(six.choices.length).toBe(6);
  });

  it('a budget too small for the policy’s anchors names lethe.budget, in words', async () => {
    const error = (await server.client.completions
      .create({
        ...completion,
        lethe: { policy: 'streaming-llm', budget: 0.05, options: { sinks: 8 } },
      } as never)
      .catch((e: unknown) => e)) as {
      status: number;
      param: string;
      code: string;
      message: string;
    };
    expect(error).toMatchObject({ status: 400, param: 'lethe.budget', code: 'invalid_value' });
    expect(error.message).not.toMatch(/\[E_[A-Z]+\]|e_arg|e_budget/);
  });

  it('no error names an internal argument or code', async () => {
    for (const body of [
      { ...completion, lethe: { policy: 'h2o', budget: 0.5, options: { window: -3 } } },
      { ...completion, lethe: { policy: 'h2o', budget: 0.5, options: { nope: 1 } } },
      { ...completion, lethe: { policy: 'nope' } },
    ]) {
      const error = (await server.client.completions
        .create(body as never)
        .catch((e: unknown) => e)) as { param: string; code: string; message: string };
      expect(error.param.startsWith('lethe.')).toBe(true);
      expect(error.code).not.toMatch(/^e_/);
      expect(error.message).not.toMatch(/\[E_[A-Z]+\]/);
    }
  });
});
