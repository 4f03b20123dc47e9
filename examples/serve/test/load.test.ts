// The load test: 64 concurrent streaming clients on one model, a quarter of them cancelling
// midway. None is lost or duplicated, every finished response equals (temperature 0) the same
// request run alone, and the server's memory is back to its baseline afterwards.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { countdownTask } from '@lethe/eval';
import { tf } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoPath, startServer, type TestServer } from './support';

const CLIENTS = 64;
const POLICIES = [
  { policy: 'full' },
  { policy: 'h2o', budget: 0.5 },
  { policy: 'streaming-llm', budget: 0.5 },
  { policy: 'tova', budget: 0.5 },
] as const;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    { countdown: repoPath('models/countdown') },
    { maxSequences: CLIENTS, maxQueue: CLIENTS },
  );
});
afterAll(() => server.app.close());

/** Request `i`: a Countdown prompt, its own length and policy. */
function request(i: number) {
  const task = countdownTask();
  return {
    model: 'countdown',
    prompt: task.example(0, i).prompt,
    max_tokens: 12 + (i % 5) * 4,
    temperature: 0,
    lethe: POLICIES[i % POLICIES.length],
  };
}

/** Streams request `i`; with `cancelAfter`, aborts after that many chunks. */
async function stream(i: number, cancelAfter?: number) {
  const body = { ...request(i), stream: true as const };
  const chunks = await server.client.completions.create(body as never);
  let text = '';
  let finish: string | null = null;
  let seen = 0;
  const ids = new Set<string>();
  try {
    for await (const chunk of chunks as unknown as AsyncIterable<{
      id: string;
      choices: { text: string; finish_reason: string | null }[];
    }>) {
      ids.add(chunk.id);
      for (const choice of chunk.choices) {
        text += choice.text;
        finish = choice.finish_reason ?? finish;
      }
      seen += 1;
      if (cancelAfter !== undefined && seen >= cancelAfter) {
        (chunks as unknown as { controller: AbortController }).controller.abort();
        return { cancelled: true, text, finish, ids };
      }
    }
  } catch (error) {
    if (cancelAfter === undefined) throw error;
    return { cancelled: true, text, finish, ids };
  }
  return { cancelled: false, text, finish, ids };
}

describe('64 concurrent streaming clients, some cancelling', () => {
  it('lose nothing, duplicate nothing, match the requests run alone, and leave memory at its baseline', async () => {
    const served = server.models.get('countdown')!;
    // each request alone first (one at a time: nothing else in the batch)
    const generated = () => served.batcher.stats().generatedTokens;
    const before = generated();
    const alone = [];
    for (let i = 0; i < CLIENTS; i++) alone.push(await stream(i));
    const aloneTokens = generated() - before;
    collectGarbage();
    const tensors = tf.memory().numTensors;
    const bytes = tf.memory().numBytes;
    const heap = process.memoryUsage().heapUsed;

    const cancelling = (i: number) => i % 4 === 3;
    const results = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => stream(i, cancelling(i) ? 2 + (i % 3) : undefined)),
    );
    for (let i = 0; i < CLIENTS; i++) {
      const result = results[i]!;
      expect(result.ids.size, `request ${i}: one response id`).toBe(1);
      if (cancelling(i)) {
        expect(result.cancelled).toBe(true);
        expect(alone[i]!.text.startsWith(result.text), `request ${i}: its prefix`).toBe(true);
      } else {
        expect(result.text, `request ${i}`).toBe(alone[i]!.text);
        expect(result.finish, `request ${i}`).toBe(alone[i]!.finish);
      }
    }
    // the cancelled sequences leave the batch at the next step: wait for the batch to empty
    for (let wait = 0; served.batcher.stats().active > 0 && wait < 200; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const stats = served.batcher.stats();
    expect(stats).toMatchObject({ active: 0, queued: 0, kvEntries: 0 });
    // the cancelled requests stopped generating when their clients left (not at max_tokens)
    const concurrentTokens = stats.generatedTokens - before - aloneTokens;
    expect(concurrentTokens).toBeLessThan(aloneTokens);
    collectGarbage();
    expect(tf.memory().numTensors).toBe(tensors);
    expect(tf.memory().numBytes).toBe(bytes);
    // the JavaScript heap: back within 16 MB of where it was (no cache or sequence kept alive)
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(16 * 2 ** 20);
    // and the server keeps serving
    const after = await stream(0);
    expect(after.text).toBe(alone[0]!.text);
  }, 120_000);
});
