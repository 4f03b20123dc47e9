import { createDefaultRegistry } from '@lethe/policies';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../src/server';

// A server with no model: every request below is refused before any model would run.
const app = createServer({
  models: new Map(),
  registry: createDefaultRegistry(),
  limits: { maxTokens: 64 },
  bodyLimit: 4096,
  apiKey: 'secret',
});
const auth = { authorization: 'Bearer secret' };

async function post(url: string, body: unknown, headers: Record<string, string> = auth) {
  const response = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    body: response.json() as { error: Record<string, unknown> },
  };
}

beforeAll(() => app.ready());
afterAll(() => app.close());

describe('request errors are answered in the OpenAI shape, naming the field', () => {
  it.each([
    ['a body that is not JSON', '{"model": ', null, 'invalid_json'],
    ['a missing field', { prompt: 'x' }, 'model', 'missing_required_parameter'],
    ['a wrong type', { model: 'm', prompt: 'x', max_tokens: '5' }, 'max_tokens', 'invalid_type'],
    ['a fractional integer', { model: 'm', prompt: 'x', n: 1.5 }, 'n', 'invalid_type'],
    [
      'a huge number',
      { model: 'm', prompt: 'x', temperature: 1e308 },
      'temperature',
      'invalid_type',
    ],
    [
      'an unsupported field',
      { model: 'm', prompt: 'x', tools: [] },
      'tools',
      'unsupported_parameter',
    ],
    [
      'a budget outside (0, 1]',
      { model: 'm', prompt: 'x', lethe: { budget: 0 } },
      'lethe.budget',
      'invalid_type',
    ],
    [
      'an unknown lethe field',
      { model: 'm', prompt: 'x', lethe: { path: '/etc' } },
      'lethe.path',
      'unsupported_parameter',
    ],
  ])('%s → 400', async (_, body, param, code) => {
    const { status, body: answer } = await post('/v1/completions', body);
    expect(status).toBe(400);
    expect(answer.error).toMatchObject({ type: 'invalid_request_error', param, code });
    expect(typeof answer.error.message).toBe('string');
  });

  it('a chat message with a wrong role names its path', async () => {
    const { status, body } = await post('/v1/chat/completions', {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'robot', content: 'x' },
      ],
    });
    expect(status).toBe(400);
    expect(body.error.param).toBe('messages.1.role');
  });

  it('an unknown model → 404 model_not_found', async () => {
    const { status, body } = await post('/v1/completions', { model: 'nope', prompt: 'x' });
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ param: 'model', code: 'model_not_found' });
  });

  it('a body past the limit → 413; not JSON → 415; no key → 401; no route → 404', async () => {
    expect((await post('/v1/completions', { model: 'm', prompt: 'x'.repeat(5000) })).status).toBe(
      413,
    );
    const text = await app.inject({
      method: 'POST',
      url: '/v1/completions',
      headers: { ...auth, 'content-type': 'application/xml' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    const noKey = await post('/v1/completions', { model: 'm', prompt: 'x' }, {});
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.type).toBe('authentication_error');
    const wrongKey = await post(
      '/v1/completions',
      { model: 'm', prompt: 'x' },
      { authorization: 'Bearer nope' },
    );
    expect(wrongKey.status).toBe(401);
    const missing = await app.inject({ method: 'GET', url: '/v1/nothing', headers: auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.type).toBe('not_found_error');
  });

  it('health and metrics need no key', async () => {
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('lethe_requests_total');
  });
});
