// Serving benchmark (not a test): aggregate decode throughput and the latency a streaming client
// sees — time to first token (TTFT) and inter-token latency (ITL), p50 / p99 — at 1, 8, 32 and 64
// concurrent clients, with continuous batching against one request at a time, and the full cache
// against StreamingLLM evicting to 25%, on the shipped language-model task model. Each scheduler is
// a server process of its own (`src/main.ts`: `--max-sequences 64`, or `1` with the rest queued);
// the clients run here and stream over HTTP, each sending its next request as soon as the last
// one ended, until the round's requests are done.
//
//   npm run bench            (from examples/serve)
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createTask, type PerplexityTask } from '@lethe/eval';
import { spawnServer } from '../test/spawn-server';

const CLIENTS = [1, 8, 32, 64] as const;
const MAX_TOKENS = 48;
const MODEL_DIR = fileURLToPath(new URL('../../../models/lm', import.meta.url));
const POLICIES = [
  { label: 'full cache', lethe: { policy: 'full' } },
  { label: 'StreamingLLM 25%', lethe: { policy: 'streaming-llm', budget: 0.25 } },
] as const;
const SCHEDULERS = [
  { label: 'continuous batching', flags: ['--max-sequences', '64', '--max-queue', '256'] },
  { label: 'one at a time', flags: ['--max-sequences', '1', '--max-queue', '256'] },
] as const;

/** What one streamed request measured, ms. */
interface Trace {
  readonly firstToken: number;
  readonly gaps: number[];
  readonly tokens: number;
}

/** Streams one completion; the times at which its text arrived. */
async function streamOne(url: string, prompt: string, lethe: object): Promise<Trace> {
  const start = performance.now();
  const response = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'lm',
      prompt,
      max_tokens: MAX_TOKENS,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      lethe,
    }),
  });
  if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
  const times: number[] = [];
  let tokens = 0;
  let pending = '';
  const decoder = new TextDecoder();
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(bytes, { stream: true });
    let end = pending.indexOf('\n\n');
    while (end !== -1) {
      const event = pending.slice(0, end);
      pending = pending.slice(end + 2);
      end = pending.indexOf('\n\n');
      const data = event.slice('data: '.length);
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data);
      if (chunk.choices[0]?.text) times.push(performance.now());
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
    }
  }
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  return { firstToken: times[0]! - start, gaps, tokens };
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** `clients` clients, each streaming requests back to back until `requests` are done. */
async function round(
  url: string,
  clients: number,
  requests: number,
  lethe: object,
  prompts: string[],
) {
  let next = 0;
  const traces: Trace[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) {
        const i = next++;
        traces.push(await streamOne(url, prompts[i % prompts.length]!, lethe));
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const tokens = traces.reduce((sum, t) => sum + t.tokens, 0);
  const gaps = traces.flatMap((t) => t.gaps);
  return {
    tokensPerSecond: tokens / seconds,
    ttft: [
      quantile(
        traces.map((t) => t.firstToken),
        0.5,
      ),
      quantile(
        traces.map((t) => t.firstToken),
        0.99,
      ),
    ],
    itl: [quantile(gaps, 0.5), quantile(gaps, 0.99)],
  };
}

async function main(): Promise<void> {
  const task = createTask('lm') as PerplexityTask;
  const prompts = Array.from({ length: 64 }, (_, i) => task.document(7, i).slice(0, 96));
  const ms = (x: number) => x.toFixed(x < 10 ? 1 : 0);
  console.log(
    `lm task model (models/lm), ${MAX_TOKENS} tokens per request, greedy, streamed; prompts of 96 characters; requests per round: max(16, 2 × clients)`,
  );
  console.log(
    '| clients | scheduler | policy | tok/s | TTFT p50 / p99 (ms) | ITL p50 / p99 (ms) |',
  );
  console.log('|--:|---|---|--:|--:|--:|');
  for (const scheduler of SCHEDULERS) {
    const server = await spawnServer([
      '--model',
      `lm=${MODEL_DIR}`,
      '--max-tokens',
      String(MAX_TOKENS),
      ...scheduler.flags,
    ]);
    try {
      await round(server.url, 4, 8, POLICIES[0].lethe, prompts); // warm-up
      for (const clients of CLIENTS) {
        for (const policy of POLICIES) {
          const r = await round(
            server.url,
            clients,
            Math.max(16, 2 * clients),
            policy.lethe,
            prompts,
          );
          const row = [
            String(clients),
            scheduler.label,
            policy.label,
            r.tokensPerSecond.toFixed(0),
            `${ms(r.ttft[0]!)} / ${ms(r.ttft[1]!)}`,
            `${ms(r.itl[0]!)} / ${ms(r.itl[1]!)}`,
          ];
          console.log(`| ${row.join(' | ')} |`);
        }
      }
    } finally {
      server.process.kill('SIGTERM');
      await once(server.process, 'exit');
    }
  }
}

await main();
