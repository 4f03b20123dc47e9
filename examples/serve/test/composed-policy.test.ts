import { countdownTask, createTask, type PerplexityTask, sequenceBudget } from '@lethe/eval';
import { composePolicySets } from '@lethe/kv-cache';
import { policyContextOf } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServedModel } from '../src/load-served-model';
import { policyOptionsOf } from '../src/policy-options-flag';
import { samplingOf } from '../src/request-sampling';
import { createServer } from '../src/server';
import { spawnServer } from './spawn-server';
import { repoPath, startServer, type TestServer } from './support';

// Compositions (`lethe.policy: "h2o+sol-fixed"`): policies filling different slots of one
// sequence's policy set, each under its own budget, through the official client.

/** The cache report of one choice. */
interface CacheEntry {
  readonly peak: number[];
  readonly live: number[];
  readonly evictions: number;
  readonly realised_budget: number;
  readonly compute?: { token_keep: number; mlp_input_keep: number; precision: number };
}

/** The `lethe` field of a response. */
interface LetheField {
  readonly policy: string;
  readonly budget: unknown;
  readonly cache: CacheEntry[];
}

type WithLethe<T> = T & { lethe: LetheField };

let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    { countdown: repoPath('models/countdown'), lm: repoPath('models/lm') },
    {},
    {},
    { 'sol-lm': repoPath('models/sol-lm'), 'sol-lm-flat': repoPath('models/sol-lm') },
    { 'sol-lm-flat': { refresh: false } },
  );
});
afterAll(() => server.app.close());

const prompt = countdownTask().example(0, 1).prompt;
const H2O_SOL = {
  policy: 'h2o+sol-fixed',
  budget: 0.5,
  options: { 'sol-fixed': { refresh: false } },
};
// sol-fixed draws each sequence's level from the sequence's random stream: a seed fixes it
const completion = { model: 'countdown', prompt, max_tokens: 32, temperature: 0, seed: 3 };

/** What the official client throws for `body`, to match against. */
async function refusal(body: object): Promise<unknown> {
  return server.client.completions.create({ ...completion, max_tokens: 4, ...body } as never).then(
    () => 'answered',
    (error: unknown) => error,
  );
}

describe('a composition named in lethe.policy', () => {
  it('h2o+sol-fixed at 0.5, not streamed: reports the composition, a peak below the full cache and the compute usage', async () => {
    const [composed, full] = (await Promise.all([
      server.client.completions.create({ ...completion, lethe: H2O_SOL } as never),
      server.client.completions.create(completion),
    ])) as unknown as WithLethe<{ choices: { text: string }[] }>[];
    expect(composed!.lethe).toMatchObject({ policy: 'h2o+sol-fixed', budget: 0.5 });
    const cache = composed!.lethe.cache[0]!;
    const fullCache = full!.lethe.cache[0]!;
    expect(cache.evictions).toBeGreaterThan(0);
    cache.peak.forEach((peak, layer) => {
      expect(peak).toBeLessThan(fullCache.peak[layer]!);
    });
    expect(cache.realised_budget).toBeLessThanOrEqual(0.5 + 1 / 32);
    expect(cache.compute!.token_keep).toBeGreaterThan(0);
    expect(cache.compute!.token_keep).toBeLessThan(1);
    expect(fullCache.compute).toBeUndefined();
  });

  it('h2o+sol-fixed streamed: the pieces and the report equal the non-streamed answer', async () => {
    const whole = (await server.client.completions.create({
      ...completion,
      lethe: H2O_SOL,
    } as never)) as unknown as WithLethe<{ choices: { text: string }[] }>;
    const stream = await server.client.completions.create({
      ...completion,
      stream: true,
      stream_options: { include_usage: true },
      lethe: H2O_SOL,
    } as never);
    let text = '';
    let report: LetheField | undefined;
    for await (const chunk of stream as unknown as AsyncIterable<
      WithLethe<{ choices: { text: string }[] }>
    >) {
      text += chunk.choices.map((choice) => choice.text).join('');
      report = chunk.lethe ?? report;
    }
    expect(text).toBe(whole.choices[0]!.text);
    expect(report).toEqual(whole.lethe);
    expect(report!.cache[0]!.compute!.token_keep).toBeLessThan(1);
  });

  it('a budget per part: each part under its own, reported as requested', async () => {
    const budget = { h2o: 0.25, 'sol-fixed': 0.75 };
    const response = (await server.client.completions.create({
      ...completion,
      lethe: { ...H2O_SOL, budget },
    } as never)) as unknown as WithLethe<object>;
    expect(response.lethe).toMatchObject({ policy: 'h2o+sol-fixed', budget });
    const cache = response.lethe.cache[0]!;
    expect(cache.realised_budget).toBeLessThanOrEqual(0.25 + 1 / 32);
    expect(cache.compute!.token_keep).toBeGreaterThan(0);
  });

  it('answers what the same policy set built directly gives, sampled with a seed', async () => {
    const body = { ...completion, temperature: 0.9, seed: 7, lethe: H2O_SOL };
    const response = (await server.client.completions.create(
      body as never,
    )) as unknown as WithLethe<{ choices: { text: string }[] }>;
    const served = server.models.get('countdown')!;
    const tokens = served.encode(prompt, 'completion');
    const registry = createDefaultRegistry();
    const h2o = await registry.prepare('h2o');
    const fixed = await registry.prepare('sol-fixed', { options: { refresh: false } });
    const context = policyContextOf(served.model, 1);
    const length = tokens.length + completion.max_tokens;
    const policies = composePolicySets([
      h2o.build(sequenceBudget(0.5, length, null, h2o.budgetForms), context),
      fixed.build(sequenceBudget(0.5, length, null, fixed.budgetForms), context),
    ]);
    const direct = await served.batcher.submit({
      prompt: tokens,
      maxNewTokens: completion.max_tokens,
      sampling: samplingOf(body, served.model.config.vocab_size),
      seed: body.seed,
      stop: { eosTokenIds: served.stopTokens },
      policies,
    });
    expect(response.choices[0]!.text).toBe(
      served.tokenizer.decode(direct.tokens, { skipSpecialTokens: true }),
    );
    expect(response.lethe.cache[0]!.peak).toEqual(Array.from(direct.cache.peakPerLayer));
    expect(response.lethe.cache[0]!.evictions).toBe(direct.cache.evictedEntries);
    expect(response.lethe.cache[0]!.compute!.token_keep).toBe(direct.cache.compute!.tokenKeep);
  });

  it('a trained SOL given at start-up with refresh off composes with H2O', async () => {
    const text = (createTask('lm') as PerplexityTask).document(0, 1).slice(0, 60);
    const response = (await server.client.completions.create({
      model: 'lm',
      prompt: text,
      max_tokens: 24,
      temperature: 0,
      lethe: { policy: 'h2o+sol-lm-flat', budget: 0.5 },
    } as never)) as unknown as WithLethe<object>;
    const cache = response.lethe.cache[0]!;
    expect(response.lethe.policy).toBe('h2o+sol-lm-flat');
    expect(cache.evictions).toBeGreaterThan(0);
    expect(cache.compute!.token_keep).toBeGreaterThan(0);
    expect(cache.compute!.token_keep).toBeLessThan(1);
    // a trained SOL that refreshes cannot: its options were fixed at start-up
    await expect(
      server.client.completions.create({
        model: 'lm',
        prompt: text,
        max_tokens: 4,
        lethe: { policy: 'h2o+sol-lm', budget: 0.5 },
      } as never),
    ).rejects.toMatchObject({
      status: 400,
      param: 'lethe.policy',
      message: expect.stringContaining('--policy-options'),
    });
  });

  it('GET /v1/policies lists the parts, with a note on compositions', async () => {
    const answer = (await (await fetch(`${server.url}/v1/policies`)).json()) as {
      object: string;
      data: { id: string; trained_options?: Record<string, unknown> }[];
      composition: string;
    };
    expect(answer.object).toBe('list');
    expect(answer.composition).toContain('h2o+sol-fixed');
    const flat = answer.data.find((policy) => policy.id === 'sol-lm-flat')!;
    expect(flat.trained_options).toMatchObject({ refresh: false, horizon: 16 });
  });

  it.each([
    ['an empty part', 'lethe.policy', 'invalid_value', { lethe: { policy: 'h2o+' } }],
    ['a part repeated', 'lethe.policy', 'invalid_value', { lethe: { policy: 'h2o+h2o' } }],
    [
      'the full cache as a part',
      'lethe.policy',
      'invalid_value',
      { lethe: { policy: 'full+h2o' } },
    ],
    ['an unknown part', 'lethe.policy', 'unknown_policy', { lethe: { policy: 'h2o+nope' } }],
    [
      'two parts filling one slot',
      'lethe.policy',
      'invalid_value',
      { lethe: { policy: 'h2o+snapkv' } },
    ],
    [
      'a trained part on a model it does not fit',
      'lethe.policy',
      'policy_model_mismatch',
      { lethe: { policy: 'h2o+sol-lm-flat' } },
    ],
    [
      'a refreshing compute part beside an eviction part',
      'lethe.options.sol-fixed.refresh',
      'invalid_value',
      { lethe: { policy: 'h2o+sol-fixed', budget: 0.5 } },
    ],
    [
      'a budget missing a part',
      'lethe.budget',
      'invalid_value',
      { lethe: { ...H2O_SOL, budget: { h2o: 0.5 } } },
    ],
    [
      'a budget for no part',
      'lethe.budget.snapkv',
      'invalid_value',
      { lethe: { ...H2O_SOL, budget: { h2o: 0.5, 'sol-fixed': 0.5, snapkv: 0.5 } } },
    ],
    [
      'a part’s budget outside (0, 1]',
      'lethe.budget.h2o',
      'invalid_type',
      { lethe: { ...H2O_SOL, budget: { h2o: 0, 'sol-fixed': 0.5 } } },
    ],
    [
      'a part’s budget too small for its anchors',
      'lethe.budget.streaming-llm',
      'invalid_value',
      {
        lethe: {
          policy: 'streaming-llm+sol-fixed',
          budget: { 'streaming-llm': 0.05, 'sol-fixed': 0.5 },
          options: { 'streaming-llm': { sinks: 8 }, 'sol-fixed': { refresh: false } },
        },
      },
    ],
    [
      'options for no part',
      'lethe.options.nope',
      'invalid_value',
      { lethe: { ...H2O_SOL, options: { ...H2O_SOL.options, nope: {} } } },
    ],
    [
      'a part’s options not an object',
      'lethe.options.h2o',
      'invalid_value',
      { lethe: { ...H2O_SOL, options: { ...H2O_SOL.options, h2o: 3 } } },
    ],
    [
      'a bad option of a part',
      'lethe.options.h2o.window',
      'invalid_value',
      { lethe: { ...H2O_SOL, options: { ...H2O_SOL.options, h2o: { window: -3 } } } },
    ],
    [
      'a bad refresh',
      'lethe.options.sol-fixed.refresh',
      'invalid_value',
      { lethe: { ...H2O_SOL, options: { 'sol-fixed': { refresh: 'no' } } } },
    ],
    [
      'options for a trained part',
      'lethe.options.sol-lm',
      'invalid_value',
      { model: 'lm', lethe: { policy: 'h2o+sol-lm', options: { 'sol-lm': { refresh: false } } } },
    ],
    [
      'a budget per part for one policy',
      'lethe.budget',
      'invalid_value',
      { lethe: { policy: 'h2o', budget: { h2o: 0.5 } } },
    ],
  ])('%s → 400 naming %s (%s)', async (_, param, code, body) => {
    const error = (await refusal(body)) as {
      status: number;
      type: string;
      message: string;
    };
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param, code });
    expect(error.message).not.toMatch(/\[E_[A-Z]+\]|sets\[|budgets\[/);
  });
});

describe('a composition’s prepared parts', () => {
  it('are released when the request ends, answered or refused', async () => {
    const registry = createDefaultRegistry();
    const released: string[] = [];
    const prepare = registry.prepare.bind(registry);
    registry.prepare = async (name, request) => {
      const prepared = await prepare(name, request);
      return {
        ...prepared,
        release: () => {
          released.push(name);
          prepared.release();
        },
      };
    };
    const countdown = await loadServedModel('countdown', repoPath('models/countdown'), {
      maxSequences: 4,
      maxQueue: 4,
      prefillChunk: 64,
    });
    const app = createServer({
      models: new Map([['countdown', countdown]]),
      registry,
      limits: { maxTokens: 64 },
    });
    try {
      const post = (lethe: object) =>
        app.inject({
          method: 'POST',
          url: '/v1/completions',
          payload: { ...completion, max_tokens: 4, lethe },
        });
      expect((await post(H2O_SOL)).statusCode).toBe(200);
      expect(released.sort()).toEqual(['h2o', 'sol-fixed']);
      released.length = 0;
      // refused when its sets are composed, after both parts were prepared
      expect((await post({ policy: 'h2o+sol-fixed', budget: 0.5 })).statusCode).toBe(400);
      expect(released.sort()).toEqual(['h2o', 'sol-fixed']);
      released.length = 0;
      // refused while preparing the second part: the first is released
      const bad = await post({ ...H2O_SOL, options: { 'sol-fixed': { refresh: 'no' } } });
      expect(bad.statusCode).toBe(400);
      expect(released).toEqual(['h2o']);
    } finally {
      await app.close();
    }
  });
});

describe('--policy-options: a trained policy’s options, given at start-up', () => {
  it('reads one JSON object per --policy name', () => {
    expect(policyOptionsOf([['sol-lm', '{"refresh":false}']], ['sol-lm'])).toEqual(
      new Map([['sol-lm', { refresh: false }]]),
    );
    for (const [pairs, message] of [
      [[['nope', '{}']], /"nope" is no --policy name/],
      [[['sol-lm', '{bad']], /sol-lm: must be JSON/],
      [[['sol-lm', '[1]']], /sol-lm: must be a JSON object/],
    ] as const) {
      expect(() => policyOptionsOf(pairs, ['sol-lm'])).toThrow(message);
    }
  });

  it('npm run serve with refresh off composes the trained SOL with H2O', async () => {
    const server = await spawnServer(
      [
        '--model',
        `lm=${repoPath('models/lm')}`,
        '--policy',
        `sol-lm=${repoPath('models/sol-lm')}`,
        '--policy-options',
        'sol-lm={"refresh":false}',
      ],
      'npm',
    );
    try {
      const response = await fetch(`${server.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'lm',
          prompt: 'The cache',
          max_tokens: 16,
          temperature: 0,
          lethe: { policy: 'h2o+sol-lm', budget: { h2o: 0.5, 'sol-lm': 0.5 } },
        }),
      });
      const answer = (await response.json()) as { lethe: LetheField };
      expect(response.status).toBe(200);
      expect(answer.lethe).toMatchObject({
        policy: 'h2o+sol-lm',
        budget: { h2o: 0.5, 'sol-lm': 0.5 },
      });
      expect(answer.lethe.cache[0]!.evictions).toBeGreaterThan(0);
      expect(answer.lethe.cache[0]!.compute!.token_keep).toBeLessThan(1);
    } finally {
      server.process.kill();
    }
  });
});
