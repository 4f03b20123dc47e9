// The API key is checked on the route the router matched, so no spelling of a request target
// reaches a /v1 route without it: percent-encoded paths, the absolute form, dot segments, doubled
// slashes, other cases, query strings and HEAD. Each form is sent over a raw socket (a URL parser
// would normalise it first); the same forms WITH the key show the router does serve them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, rawRequest } from './raw-http';
import { repoPath, startServer, type TestServer } from './support';

const KEY = 'k3y';
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ countdown: repoPath('models/countdown') }, {}, { apiKey: KEY });
});
afterAll(() => server.app.close());

const body = JSON.stringify({ model: 'countdown', prompt: 'Numbers: 3 5\n', max_tokens: 2 });
const absolute = () => `http://${new URL(server.url).host}`;

/** Targets that the router serves as a /v1 route. */
const served: [string, string, () => string][] = [
  ['GET', 'canonical', () => '/v1/models'],
  ['GET', 'percent-encoded digit', () => '/v%31/models'],
  ['GET', 'percent-encoded path', () => '/%76%31/%6d%6f%64%65%6c%73'],
  ['GET', 'lower-case escapes', () => '/%76%31/models'],
  ['GET', 'absolute form', () => `${absolute()}/v1/models`],
  ['GET', 'absolute form, encoded', () => `${absolute()}/v%31/models`],
  ['GET', 'a query naming a public route', () => '/v1/models?/health'],
  ['GET', 'a model by encoded id', () => '/v1/models/%63ountdown'],
  ['HEAD', 'HEAD', () => '/v1/models'],
  ['POST', 'encoded completions', () => '/%76%31/completions'],
  ['POST', 'absolute-form completions', () => `${absolute()}/v1/completions`],
];

/** Targets that match no route, or a public one's spelling around a /v1 path. */
const unmatched: [string, string, () => string][] = [
  ['GET', 'doubled slash', () => '//v1/models'],
  ['GET', 'inner doubled slash', () => '/v1//models'],
  ['GET', 'trailing slash', () => '/v1/models/'],
  ['GET', 'upper case', () => '/V1/models'],
  ['GET', 'dot segment', () => '/./v1/models'],
  ['GET', 'through a public route', () => '/health/../v1/models'],
  ['GET', 'encoded dot segments', () => '/health/%2e%2e/v1/models'],
  ['GET', 'encoded slash', () => '/v1%2Fmodels'],
  ['GET', 'semicolon', () => '/v1/models;/health'],
  ['GET', 'backslash', () => '/v1\\models'],
  ['OPTIONS', 'OPTIONS', () => '/v1/models'],
  ['GET', 'asterisk form', () => '*'],
];

async function send(method: string, target: string, headers: Record<string, string> = {}) {
  const payload = method === 'POST' ? body : '';
  return rawRequest(server.url, httpRequest(method, target, server.url, headers, payload));
}

describe('the API key on every spelling of a route', () => {
  it.each(served)('%s %s: 401 without the key, served with it', async (method, _, target) => {
    const without = await send(method, target());
    expect(without.status).toBe(401);
    if (method !== 'HEAD') expect(without.text).toContain('"invalid_api_key"');
    const withKey = await send(method, target(), { authorization: `Bearer ${KEY}` });
    expect(withKey.status).toBe(200);
  });

  it.each(unmatched)('%s %s: never served without the key', async (method, _, target) => {
    const without = await send(method, target());
    // refused by the key check, or by the HTTP parser before any route (400)
    expect([400, 401]).toContain(without.status);
  });

  it.each([
    ['lower-case scheme', { authorization: `bearer ${KEY}` }],
    ['two spaces', { authorization: `Bearer  ${KEY}` }],
    ['basic', { authorization: `Basic ${Buffer.from(`x:${KEY}`).toString('base64')}` }],
    ['a prefix of the key', { authorization: `Bearer ${KEY.slice(0, 2)}` }],
    ['the key and more', { authorization: `Bearer ${KEY}x` }],
    ['another header', { 'x-api-key': KEY }],
  ])('a key sent wrongly (%s) is refused', async (_, headers) => {
    expect((await send('GET', '/v1/models', headers)).status).toBe(401);
  });

  it('a key in the query string is refused', async () => {
    expect((await send('GET', `/v1/models?api_key=${KEY}`)).status).toBe(401);
  });

  it('health and metrics stay open, however spelled', async () => {
    expect((await send('GET', '/health')).status).toBe(200);
    expect((await send('GET', '/%68ealth')).status).toBe(200);
    expect((await send('GET', `${absolute()}/metrics`)).status).toBe(200);
  });

  it('the official client with the key is served, without it refused', async () => {
    expect((await server.client.models.list()).data.map((m) => m.id)).toEqual(['countdown']);
    const { default: OpenAI } = await import('openai');
    const keyless = new OpenAI({ apiKey: 'wrong', baseURL: `${server.url}/v1`, maxRetries: 0 });
    await expect(keyless.models.list()).rejects.toMatchObject({ status: 401 });
  });
});
