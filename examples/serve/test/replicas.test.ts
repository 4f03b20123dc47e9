// Two replicas of the server behind a local load balancer (Fastify with @fastify/reply-from over
// both, undici's balanced pool): 64 streaming clients through it lose nothing, each answer equals
// (temperature 0) the same request sent to one replica alone, and both replicas serve.

import replyFrom from '@fastify/reply-from';
import { countdownTask } from '@lethe/eval';
import Fastify, { type FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SpawnedServer, spawnServer } from './spawn-server';
import { repoPath } from './support';

const CLIENTS = 64;
let replicas: SpawnedServer[];
let balancer: FastifyInstance;
let balancerUrl: string;

beforeAll(async () => {
  const args = ['--model', `countdown=${repoPath('models/countdown')}`, '--max-sequences', '32'];
  replicas = await Promise.all([spawnServer(args), spawnServer(args)]);
  balancer = Fastify();
  await balancer.register(replyFrom, { base: replicas.map((replica) => replica.url) });
  balancer.all('/*', (request, reply) => reply.from(request.url));
  balancerUrl = await balancer.listen({ host: '127.0.0.1', port: 0 });
}, 120_000);

afterAll(async () => {
  await balancer?.close();
  for (const replica of replicas ?? []) replica.process.kill('SIGTERM');
});

/** Request `i`: a Countdown prompt of its own and its own length, greedy. */
function request(i: number) {
  return {
    model: 'countdown',
    prompt: countdownTask().example(0, i % 16).prompt,
    max_tokens: 12 + (i % 5) * 4,
    temperature: 0,
  };
}

/** Streams request `i` from `url`: its text, finish reason and response ids. */
async function stream(url: string, i: number) {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const chunks = await client.completions.create({ ...request(i), stream: true });
  let text = '';
  let finish: string | null = null;
  const ids = new Set<string>();
  for await (const chunk of chunks) {
    ids.add(chunk.id);
    for (const choice of chunk.choices) {
      text += choice.text;
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, finish, ids };
}

/** Completions a replica answered, by its /metrics (`lethe_requests_total` of that endpoint). */
async function requestsServed(replica: SpawnedServer): Promise<number> {
  const metrics = await (await fetch(`${replica.url}/metrics`)).text();
  return [
    ...metrics.matchAll(/^lethe_requests_total\{endpoint="\/v1\/completions",[^}]*\} (\d+)$/gm),
  ].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('two replicas behind a load balancer', () => {
  it('serve 64 concurrent streams with nothing lost, each as one replica answers it alone', async () => {
    for (const replica of replicas) expect((await fetch(`${replica.url}/health`)).status).toBe(200);
    const alone: Awaited<ReturnType<typeof stream>>[] = [];
    for (let i = 0; i < CLIENTS; i++) alone.push(await stream(replicas[0]!.url, i));
    const before = await Promise.all(replicas.map(requestsServed));
    const results = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => stream(balancerUrl, i)),
    );
    results.forEach((result, i) => {
      expect(result.ids.size, `request ${i}: one response id`).toBe(1);
      expect(result.text, `request ${i}`).toBe(alone[i]!.text);
      expect(result.finish, `request ${i}`).toBe(alone[i]!.finish);
    });
    const served = (await Promise.all(replicas.map(requestsServed))).map((n, r) => n - before[r]!);
    expect(served[0]! + served[1]!).toBe(CLIENTS);
    expect(Math.min(...served), `both replicas serve: ${served.join(' + ')}`).toBeGreaterThan(0);
  }, 180_000);
});
