// The server as a user starts it (`npm run serve`, here `src/main.ts` through tsx): SIGTERM
// while a request streams lets that request finish, refuses new connections, and exits 0.
import { once } from 'node:events';
import { createTask, type PerplexityTask } from '@lethe/eval';
import { describe, expect, it } from 'vitest';
import { spawnServer } from './spawn-server';
import { repoPath } from './support';

describe('npm run serve', () => {
  it('drains on SIGTERM: the running request finishes, then the process exits 0', async () => {
    const server = await spawnServer(['--model', `lm=${repoPath('models/lm')}`]);
    const { url, process: child } = server;
    const logs = () => server.logs();
    // every log line is one JSON object (pino)
    const first = logs()
      .split('\n')
      .find((line) => line.includes('listening'))!;
    expect(JSON.parse(first)).toMatchObject({ level: 30 });
    const prompt = (createTask('lm') as PerplexityTask).document(0, 2).slice(0, 40);
    const response = await fetch(`${url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'lm', prompt, max_tokens: 300, temperature: 0, stream: true }),
    });
    const reader = response.body!.getReader();
    await reader.read(); // it streams: the request is running
    child.kill('SIGTERM');
    let body = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      body += new TextDecoder().decode(value);
    }
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(body).toContain('"finish_reason":"length"');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(logs()).toContain('draining');
  }, 60_000);
});
