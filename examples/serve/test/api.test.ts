import { countdownTask, createTask, type PerplexityTask } from '@lethe/eval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath, startServer, type TestServer } from './support';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    {
      countdown: repoPath('models/countdown'),
      qwen: repoPath('fixtures/hf/tiny-qwen2'),
      llama: repoPath('fixtures/hf/tiny-llama'),
    },
    {},
    { apiKey: 'k3y' },
  );
});
afterAll(() => server.app.close());

const prompt = countdownTask().example(0, 1).prompt;
const messages = [
  { role: 'system' as const, content: 'Answer briefly.' },
  { role: 'user' as const, content: 'Tell me about KV caches, s’il vous plaît.' },
];

async function streamedChat(model: string) {
  const stream = await server.client.chat.completions.create({
    model,
    messages,
    max_tokens: 12,
    temperature: 0,
    stream: true,
  });
  let content = '';
  let finish: string | null = null;
  const roles: string[] = [];
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      if (choice.delta.role) roles.push(choice.delta.role);
      content += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  return { content, finish, roles };
}

describe('chat completions on Hugging Face directories (official client)', () => {
  it.each(['qwen', 'llama'])(
    '%s: the streamed deltas join into the whole answer',
    async (model) => {
      const whole = await server.client.chat.completions.create({
        model,
        messages,
        max_tokens: 12,
        temperature: 0,
      });
      expect(whole.object).toBe('chat.completion');
      expect(whole.choices[0]!.message.role).toBe('assistant');
      const streamed = await streamedChat(model);
      expect(streamed.roles).toEqual(['assistant']);
      expect(streamed.content).toBe(whole.choices[0]!.message.content);
      expect(streamed.finish).toBe(whole.choices[0]!.finish_reason);
      // the prompt is the chat template's rendering, tokenized: more tokens than the messages' words
      expect(whole.usage!.prompt_tokens).toBeGreaterThan(10);
    },
  );

  it('a task model has no chat template: 400 naming model', async () => {
    await expect(
      server.client.chat.completions.create({ model: 'countdown', messages, max_tokens: 4 }),
    ).rejects.toMatchObject({ status: 400, param: 'model' });
  });
});

describe('completions', () => {
  it('n choices with a seed: each choice its own stream, the same again with the same seed', async () => {
    const ask = () =>
      server.client.completions.create({
        model: 'countdown',
        prompt,
        max_tokens: 16,
        temperature: 1,
        n: 3,
        seed: 11,
      });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(a.choices.map((c) => c.text)).toEqual(b.choices.map((c) => c.text));
    expect(a.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  it('a stop sequence ends the text before it, streamed or not', async () => {
    const full = await server.client.completions.create({
      model: 'countdown',
      prompt,
      max_tokens: 32,
      temperature: 0,
    });
    const text = full.choices[0]!.text;
    const stop = text.slice(3, 5);
    const cut = text.slice(0, text.indexOf(stop));
    const whole = await server.client.completions.create({
      model: 'countdown',
      prompt,
      max_tokens: 32,
      temperature: 0,
      stop,
    });
    expect(whole.choices[0]).toMatchObject({ text: cut, finish_reason: 'stop' });
    const stream = await server.client.completions.create({
      model: 'countdown',
      prompt,
      max_tokens: 32,
      temperature: 0,
      stop: [stop],
      stream: true,
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices.map((c) => c.text).join('');
    expect(streamed).toBe(cut);
  });

  it('the lethe extension picks the policy and reports what the cache did', async () => {
    const response = (await server.client.completions.create({
      model: 'countdown',
      prompt,
      max_tokens: 32,
      temperature: 0,
      lethe: { policy: 'h2o', budget: 0.25 },
    } as never)) as unknown as {
      lethe: {
        policy: string;
        budget: number;
        cache: { evictions: number; realised_budget: number; peak: number[] }[];
      };
    };
    expect(response.lethe.policy).toBe('h2o');
    const full = (await server.client.completions.create({
      model: 'countdown',
      prompt,
      max_tokens: 32,
      temperature: 0,
    })) as unknown as typeof response;
    expect(full.lethe.cache[0]).toMatchObject({ evictions: 0, realised_budget: 1 });
    const cache = response.lethe.cache[0]!;
    expect(cache.evictions).toBeGreaterThan(0);
    // the budget bounds the peak, the prompt's included (a ceiling of ⌈0.25 · full⌉ per head)
    expect(cache.realised_budget).toBeLessThanOrEqual(0.25 + 1 / 32);
    const live = (cache as unknown as { live: number[] }).live;
    const fullLive = (full.lethe.cache[0] as unknown as { live: number[] }).live;
    expect(live[0]!).toBeLessThan(fullLive[0]! / 2);
    expect(full.lethe.cache[0]).toMatchObject({ read_fraction: 1 });
    // Quest keeps every entry and reads a quarter of the full-cache length per step and KV head
    const quest = (await server.client.completions.create({
      model: 'countdown',
      prompt,
      max_tokens: 32,
      temperature: 0,
      lethe: {
        policy: 'quest',
        budget: 0.25,
        options: { pageSize: 4, minPages: 1, denseLayers: 0 },
      },
    } as never)) as unknown as { lethe: { cache: { read_fraction: number }[] } };
    const read = quest.lethe.cache[0]!;
    expect(read).toMatchObject({ evictions: 0, realised_budget: 1 });
    expect(read.read_fraction).toBeGreaterThan(0);
    expect(read.read_fraction).toBeLessThan(0.75);
  });

  it.each([
    [{ lethe: { policy: 'nope' } }, 'lethe.policy'],
    [{ lethe: { policy: 'full', budget: 0.5 } }, 'lethe.budget'],
    [{ lethe: { policy: 'h2o', budget: 0.5, options: { window: -3 } } }, 'lethe.options.window'],
    [
      { lethe: { policy: 'quest', budget: 0.5, options: { pageSize: 0 } } },
      'lethe.options.pageSize',
    ],
    [{ max_tokens: 10_000 }, 'max_tokens'],
    [{ prompt: 'x'.repeat(5000) }, 'prompt'],
    [{ prompt: [1, 2, 999] }, 'prompt.2'],
    [{ prompt: [-1] }, 'prompt.0'],
    [
      {
        prompt: [
          [3, 4],
          [5, 1.5],
        ],
      },
      'prompt.1.1',
    ],
    [{ prompt: ['a', [3]] }, 'prompt.1'],
  ])('bad request %# → 400 naming %s', async (change, param) => {
    await expect(
      server.client.completions.create({
        model: 'countdown',
        prompt,
        max_tokens: 4,
        ...change,
      } as never),
    ).rejects.toMatchObject({ status: 400, param });
  });

  it('a wrong API key is refused', async () => {
    const response = await fetch(`${server.url}/v1/models`, {
      headers: { authorization: 'Bearer wrong' },
    });
    expect(response.status).toBe(401);
  });
});

describe('a trained policy given at start-up', () => {
  it('SOL on the model it was trained for: its compute usage in the report; on another model: 400', async () => {
    const withSol = await startServer(
      { lm: repoPath('models/lm'), countdown: repoPath('models/countdown') },
      {},
      {},
      { 'sol-lm': repoPath('models/sol-lm') },
    );
    try {
      const text = (createTask('lm') as PerplexityTask).document(0, 1).slice(0, 60);
      const response = (await withSol.client.completions.create({
        model: 'lm',
        prompt: text,
        max_tokens: 24,
        temperature: 0,
        lethe: { policy: 'sol-lm', budget: 0.5 },
      } as never)) as unknown as { lethe: { cache: { compute?: { token_keep: number } }[] } };
      const usage = response.lethe.cache[0]!.compute!;
      expect(usage.token_keep).toBeGreaterThan(0);
      expect(usage.token_keep).toBeLessThan(1);
      await expect(
        withSol.client.completions.create({
          model: 'countdown',
          prompt,
          max_tokens: 4,
          lethe: { policy: 'sol-lm', budget: 0.5 },
        } as never),
      ).rejects.toMatchObject({
        status: 400,
        param: 'lethe.policy',
        code: 'policy_model_mismatch',
        message: expect.not.stringMatching(/\[E_[A-Z]+\]|parameters\./),
      });
      // what a request may name: the heuristics and the trained policy, with budget forms
      const listing = await fetch(`${withSol.url}/v1/policies`);
      const { data } = (await listing.json()) as {
        data: { id: string; learned: boolean; budget_forms: string[]; unfit_models?: object }[];
      };
      const byId = new Map(data.map((policy) => [policy.id, policy]));
      expect(byId.get('h2o')).toMatchObject({ learned: false, budget_forms: ['capacity', 'rate'] });
      expect(byId.get('quest')).toMatchObject({ learned: false, budget_forms: ['read'] });
      expect(byId.get('sol-lm')).toMatchObject({ learned: true, budget_forms: ['compute'] });
      expect(Object.keys(byId.get('sol-lm')!.unfit_models!)).toEqual(['countdown']);
      expect(byId.has('sol')).toBe(false);
      await expect(
        withSol.client.completions.create({
          model: 'lm',
          prompt: text,
          max_tokens: 4,
          lethe: { policy: 'sol' },
        } as never),
      ).rejects.toMatchObject({ status: 400, param: 'lethe.policy', code: 'unknown_policy' });
    } finally {
      await withSol.app.close();
    }
  });
});

describe('limits and shutdown', () => {
  it('over capacity → 429 with Retry-After; then a graceful close lets the running request finish', async () => {
    // the language-model task model writes text without an end token: it runs to max_tokens
    const small = await startServer(
      { lm: repoPath('models/lm') },
      { maxSequences: 1, maxQueue: 0 },
    );
    const text = (createTask('lm') as PerplexityTask).document(0, 0).slice(0, 40);
    const body = { model: 'lm', prompt: text, max_tokens: 200, temperature: 0 };
    const running = small.client.completions.create(body);
    // the first request holds the only slot (wait until it does)
    const batcher = small.models.get('lm')!.batcher;
    while (batcher.stats().active === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const refused = await fetch(`${small.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, max_tokens: 4 }),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await refused.json()).error.type).toBe('rate_limit_error');
    expect(batcher.stats().active).toBe(1);
    const closed = small.app.close();
    const answer = await running;
    expect(answer.choices[0]!.finish_reason).toBe('length');
    expect(answer.usage!.completion_tokens).toBe(200);
    await closed;
    await expect(fetch(`${small.url}/health`)).rejects.toThrow();
  });
});
