// The server as a user starts it: SIGTERM while a request streams lets that request finish,
// refuses new requests, closes the connections of the responses it ends (so a client's pool of
// keep-alive connections cannot hold the process), and exits 0 — through `npm run serve` too,
// which passes the signal on instead of leaving the server behind.
import { once } from 'node:events';
import { createTask, type PerplexityTask } from '@lethe/eval';
import { describe, expect, it } from 'vitest';
import { type Launcher, spawnServer } from './spawn-server';
import { repoPath } from './support';

/** Resolves true once `url` no longer answers (the server has closed its port), false after `ms`. */
async function closedWithin(url: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const up = await fetch(`${url}/health`, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    if (!up) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe.each(['node', 'npm'] as Launcher[])('started with %s', (launcher) => {
  it('drains on SIGTERM: the running stream finishes, new requests are refused, the process exits 0', async () => {
    // An idle keep-alive connection would hold the process for a minute: the drain must close it.
    const server = await spawnServer(
      ['--model', `lm=${repoPath('models/lm')}`, '--keep-alive-timeout', '60000'],
      launcher,
    );
    const { url, process: child } = server;
    const logs = () => server.logs();
    // every log line is one JSON object (pino)
    const first = logs()
      .split('\n')
      .find((line) => line.includes('listening'))!;
    expect(JSON.parse(first)).toMatchObject({ level: 30 });
    // a pooled keep-alive connection, idle during the drain (fetch keeps its connections)
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const prompt = (createTask('lm') as PerplexityTask).document(0, 2).slice(0, 40);
    const response = await fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'lm', prompt, max_tokens: 300, temperature: 0, stream: true }),
    });
    const reader = response.body!.getReader();
    await reader.read(); // it streams: the request is running
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    while (!logs().includes('draining')) await new Promise((resolve) => setTimeout(resolve, 20));
    // a new request during the drain is refused: 503, or no connection at all
    const during = await fetch(`${url}/v1/models`).then(
      (answer) => answer.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(during);
    let body = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      body += new TextDecoder().decode(value);
    }
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(body).toContain('"finish_reason":"length"');
    // the client's pool still holds its connections; the process exits all the same
    const start = Date.now();
    const [code] = await exited;
    // (not after the 60-s keep-alive timeout: the drain closes the connections it answers on;
    // the margin leaves room for a loaded machine, where npm alone takes seconds to exit)
    expect(Date.now() - start).toBeLessThan(30_000);
    expect(code).toBe(0);
    expect(await closedWithin(url, 5_000)).toBe(true);
    expect(logs()).toContain('draining');
  }, 90_000);
});

describe('the pnpm form', () => {
  it('takes its flags after the `--` that `pnpm run serve -- …` passes on', async () => {
    const server = await spawnServer(['--', '--model', `lm=${repoPath('models/lm')}`]);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const exited = once(server.process, 'exit');
    server.process.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  }, 60_000);
});
