import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath, startServer, type TestServer } from './support';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ countdown: repoPath('models/countdown') });
});
afterAll(() => server.app.close());

/** A Countdown prompt the task model answers. */
const PROMPT = 'Numbers: 3 5 7 2\nTarget: 10\n';

describe('the official openai client', () => {
  it('lists the models', async () => {
    const list = await server.client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['countdown']);
  });

  it('streams a completion whose pieces join into the non-streamed text', async () => {
    const whole = await server.client.completions.create({
      model: 'countdown',
      prompt: PROMPT,
      max_tokens: 24,
      temperature: 0,
    });
    expect(whole.object).toBe('text_completion');
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);
    const stream = await server.client.completions.create({
      model: 'countdown',
      prompt: PROMPT,
      max_tokens: 24,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text += choice.text;
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0]!.text);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage).toEqual(whole.usage);
  });
});
