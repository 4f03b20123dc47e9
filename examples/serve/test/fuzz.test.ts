// A fuzz pass over request bodies: random JSON, valid bodies with one field replaced by a random
// value (wrong types, huge numbers, unicode, nesting), and raw text. The server answers every one
// with a 2xx or an OpenAI-shaped 4xx — never a 5xx, never a crash — and keeps serving.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath, startServer, type TestServer } from './support';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    { countdown: repoPath('models/countdown'), qwen: repoPath('fixtures/hf/tiny-qwen2') },
    { maxSequences: 8, maxQueue: 8 },
    { limits: { maxTokens: 6 } },
  );
});
afterAll(() => server.app.close());

const completion = { model: 'countdown', prompt: 'Numbers: 3 5\n', max_tokens: 4, temperature: 0 };
const chat = {
  model: 'qwen',
  messages: [{ role: 'user', content: 'héllo 👋 世界' }],
  max_tokens: 4,
  temperature: 0.7,
  seed: 3,
};
const fields = [
  'model',
  'prompt',
  'messages',
  'max_tokens',
  'temperature',
  'top_p',
  'n',
  'stream',
  'stop',
  'seed',
  'stream_options',
  'lethe',
  'user',
  'max_completion_tokens',
  'logprobs',
  'top_logprobs',
  'echo',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'top_k',
  'min_p',
  'best_of',
  'suffix',
  'response_format',
  'tools',
];

/** Any JSON value, with the awkward ones weighted in: huge and negative numbers, unicode, deep nesting. */
const awkward = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -1, 0, 0.5, 1e-320, Number.MAX_SAFE_INTEGER),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '\u0000', '\uD800', '💥'.repeat(50), 'h2o', 'full', 'countdown', 'qwen'),
  fc.record(
    {
      policy: fc.oneof(fc.string(), fc.constantFrom('h2o', 'snapkv', 'sol', 'ngc', 'gsa')),
      budget: fc.oneof(fc.double(), fc.constantFrom(0.25, 1, 0)),
      options: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
);

const bodies = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc
    .tuple(fc.constantFrom(completion, chat), fc.constantFrom(...fields), awkward)
    .map(([base, field, value]) => JSON.stringify({ ...base, [field]: value })),
  fc.tuple(fc.constantFrom(completion, chat), fc.constantFrom(...fields)).map(([base, field]) => {
    const { [field]: _, ...rest } = base as Record<string, unknown>;
    return JSON.stringify(rest);
  }),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

describe('fuzzed request bodies', () => {
  it('never get a 5xx, and the server keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.constantFrom('/v1/completions', '/v1/chat/completions'),
        async (payload, url) => {
          const response = await server.app.inject({
            method: 'POST',
            url,
            headers: { 'content-type': 'application/json' },
            payload,
          });
          expect(response.statusCode, `${url} ${payload}`).toBeLessThan(500);
          if (response.statusCode >= 400) {
            const body = response.json();
            expect(typeof body.error.message).toBe('string');
            expect(typeof body.error.type).toBe('string');
          }
        },
      ),
      { numRuns: 400 },
    );
    const after = await server.client.completions.create({ ...completion });
    expect(after.choices[0]!.text.length).toBeGreaterThan(0);
    expect(server.models.get('countdown')!.batcher.stats().active).toBe(0);
  }, 240_000);
});
