import { countdownTask } from '@lethe/eval';
import { ensureWebGpu } from '@lethe/tensor';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SpawnedServer, spawnServer } from './spawn-server';
import { repoPath } from './support';

// The server on `--backend webgpu` — its requests' caches are `DeviceKVCache`s, attention the
// paged WGSL kernel — answers what the default (wasm, host caches) server answers: the same greedy
// completions and cache reports, through the official client, under the full cache and under a
// policy. WebGPU is SwiftShader here (Debian's chromium); in CI (CI=true) the test fails rather
// than skips.
const reason = await ensureWebGpu({ required: true }).then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
);
const skip = reason !== undefined && !process.env.CI;
if (skip) console.warn(`[serve] WebGPU server test skipped: ${reason}`);

const prompt = countdownTask().example(0, 1).prompt;

describe.skipIf(skip)('the server on WebGPU', () => {
  const servers: SpawnedServer[] = [];
  const clients: OpenAI[] = [];
  beforeAll(async () => {
    for (const backend of [[], ['--backend', 'webgpu']]) {
      const server = await spawnServer([
        '--model',
        `countdown=${repoPath('models/countdown')}`,
        ...backend,
      ]);
      servers.push(server);
      clients.push(new OpenAI({ apiKey: 'unused', baseURL: `${server.url}/v1`, maxRetries: 0 }));
    }
  }, 120_000);
  afterAll(() => {
    for (const server of servers) server.process.kill();
  });

  it('answers as the wasm server does, with the full cache and under H2O', async () => {
    for (const lethe of [undefined, { policy: 'h2o', budget: 0.25 }]) {
      const [wasm, webgpu] = (await Promise.all(
        clients.map((client) =>
          client.completions.create({
            model: 'countdown',
            prompt,
            max_tokens: 24,
            temperature: 0,
            ...(lethe === undefined ? {} : { lethe }),
          } as never),
        ),
      )) as unknown as { choices: { text: string }[]; lethe: { cache: unknown[] } }[];
      expect(servers.map((server) => /"backend":"(\w+)"/.exec(server.logs())?.[1])).toEqual([
        'wasm',
        'webgpu',
      ]);
      expect(webgpu!.choices[0]!.text).toBe(wasm!.choices[0]!.text);
      expect(webgpu!.lethe.cache).toEqual(wasm!.lethe.cache);
    }
  }, 300_000);
});
