// The chunks of a stream, as OpenAI clients read them: every chunk has a choice — the usual
// `chunk.choices[0].delta.content` loop never meets an empty list — except the one usage chunk a
// request asks for with stream_options.include_usage. The lethe report rides on the last chunk
// with a choice, or on the usage chunk when there is one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath, startServer, type TestServer } from './support';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    countdown: repoPath('models/countdown'),
    qwen: repoPath('fixtures/hf/tiny-qwen2'),
  });
});
afterAll(() => server.app.close());

interface Chunk {
  choices: { index: number; finish_reason: string | null }[];
  usage?: unknown;
  lethe?: { policy: string; cache: { index: number }[] };
}

const lethe = { policy: 'h2o', budget: 0.5 };

describe('stream chunks', () => {
  it('chat: the common client loop reads every chunk; the report is on the last one', async () => {
    const stream = await server.client.chat.completions.create({
      model: 'qwen',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 8,
      temperature: 0.8,
      seed: 1,
      n: 3,
      stream: true,
      lethe,
    } as never);
    const chunks: Chunk[] = [];
    let text = '';
    for await (const chunk of stream as unknown as AsyncIterable<
      Chunk & {
        choices: { delta: { content?: string } }[];
      }
    >) {
      text += chunk.choices[0]!.delta.content ?? '';
      chunks.push(chunk);
    }
    expect(text.length).toBeGreaterThan(0);
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);
    expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
    const reported = chunks.filter((chunk) => chunk.lethe !== undefined);
    expect(reported).toEqual([chunks.at(-1)]);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).not.toBeNull();
    expect(reported[0]!.lethe!.policy).toBe('h2o');
    expect(reported[0]!.lethe!.cache.map((c) => c.index)).toEqual([0, 1, 2]);
    const finishes = chunks.filter((chunk) => chunk.choices[0]!.finish_reason !== null);
    expect(finishes.map((chunk) => chunk.choices[0]!.index).sort()).toEqual([0, 1, 2]);
  });

  it('completions with include_usage: usage null on each chunk, then one usage chunk with the report', async () => {
    const stream = await server.client.completions.create({
      model: 'countdown',
      prompt: ['Numbers: 3 5\n', 'Numbers: 2 9 4\n'],
      max_tokens: 6,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      lethe,
    } as never);
    const chunks: Chunk[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Chunk>) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: expect.any(Number) });
    expect(last.lethe!.cache.map((c) => c.index)).toEqual([0, 1]);
    const before = chunks.slice(0, -1);
    expect(before.every((chunk) => chunk.choices.length === 1 && chunk.usage === null)).toBe(true);
    expect(before.every((chunk) => chunk.lethe === undefined)).toBe(true);
  });
});
