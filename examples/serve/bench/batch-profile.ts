// Where a decode step's time goes as the batch grows (not a test): the server runs under V8's
// sampling profiler (`node --cpu-prof`) while `clients` streaming clients each send requests back
// to back (the serving benchmark's load: the LM task model, 48 tokens per request, greedy, full
// cache); then the profile's self time is summed per function and per part of the stack, as CPU
// ms per generated token, for 8 and for 64 clients side by side (an anonymous callback charged by
// the function it is in; 1,536 requests, so the server's start-up is a small part). A part whose
// cost per token does not fall as the batch grows is per-sequence work that batching does not
// share.
//
//   npx tsx bench/batch-profile.ts              (from examples/serve)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTask, type PerplexityTask } from '@lethe/eval';

const MAX_TOKENS = 48;
const REQUESTS = 1536;
const CLIENTS = [8, 64] as const;
const MODEL_DIR = fileURLToPath(new URL('../../../models/lm', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** One node of a V8 `.cpuprofile`. */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: number[];
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

/**
 * The parts of the stack a sample is charged to, by its innermost frame (`url`, `name`) and, for
 * WebAssembly, the innermost JavaScript frame of ours or tfjs's that ran it (`caller`): the
 * attention kernel of `@lethe/kv-cache` is WebAssembly too.
 */
const PARTS: [string, (url: string, name: string, caller: string) => boolean][] = [
  [
    'attention from the cache (kv-cache kernel, page copies; RoPE and row shuffles in the step)',
    (url, name, caller) =>
      (url.startsWith('wasm://') && caller.includes('/kv-cache/')) ||
      (url.includes('/kv-cache/') && /attend|gather|fillBias|laneAttention|exp32/.test(name)) ||
      (url.includes('/model/') &&
        /ropeRowsInPlace|attendLayer|transposeRows|projectRows/.test(name)),
  ],
  ['tfjs wasm kernels', (url) => url.includes('tfjs-backend-wasm') || url.startsWith('wasm://')],
  ['tfjs core (ops, engine, tensors)', (url) => url.includes('tfjs-core')],
  ['sampling', (_, name) => /sample|nucleus|adjusted|argmax|checkLogits/i.test(name)],
  [
    'batcher, states, cache appends, eviction bookkeeping',
    (url) => url.includes('/model/') || url.includes('/kv-cache/'),
  ],
  [
    'HTTP, JSON, streaming (fastify, node)',
    (url) => url.includes('fastify') || url.startsWith('node:') || url.includes('/examples/serve/'),
  ],
  ['garbage collection', (_, name) => name === '(garbage collector)'],
  ['idle', (_, name) => name === '(idle)' || name === '(program)'],
];

/** Self ms per function and per part of a profile, and the wasm kernels' ms by our calling function. */
function selfTimes(profile: Profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  /** The innermost function of `@lethe/model` on the stack of `id` (what asked for the kernel). */
  const modelCaller = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      if (url.includes('/model/') && functionName !== '') return functionName;
    }
    return '(none)';
  };
  /** The innermost named function on the stack of `id` (an anonymous callback's enclosing one). */
  const named = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { functionName } = byId.get(at)!.callFrame;
      if (functionName !== '') return functionName;
    }
    return '';
  };
  /** The url of the innermost JavaScript frame on the stack of `id`. */
  const jsCaller = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { url } = byId.get(at)!.callFrame;
      if (url !== '' && !url.startsWith('wasm://')) return url;
    }
    return '';
  };
  const kernelsBy = new Map<string, number>();
  const perNode = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    perNode.set(id, (perNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const functions = new Map<string, number>();
  const parts = new Map<string, number>();
  for (const [id, ms] of perNode) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const file = url.replace(/^.*\/(packages|examples|node_modules)\//, '$1/');
    const key = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + ms);
    const caller = url.startsWith('wasm://') ? jsCaller(id) : '';
    const part = PARTS.find(([, test]) => test(url, named(id), caller))?.[0] ?? 'other';
    parts.set(part, (parts.get(part) ?? 0) + ms);
    if (part === 'tfjs wasm kernels') {
      const asker = modelCaller(id);
      kernelsBy.set(asker, (kernelsBy.get(asker) ?? 0) + ms);
    }
  }
  return { functions, parts, kernelsBy };
}

/** Runs the load under the profiler with `clients` clients; the profile and the tokens generated. */
async function profiled(
  clients: number,
): Promise<{ profile: Profile; tokens: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'lethe-profile-'));
  const child = spawn(
    process.execPath,
    [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      '--import',
      'tsx',
      MAIN,
      '--model',
      `lm=${MODEL_DIR}`,
      '--max-sequences',
      '64',
      '--port',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let log = '';
  const url = await new Promise<string>((resolve) => {
    child.stdout!.on('data', (data) => {
      log += String(data);
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (match) resolve(match[1]!);
    });
  });
  const task = createTask('lm') as PerplexityTask;
  const prompts = Array.from({ length: 64 }, (_, i) => task.document(7, i).slice(0, 96));
  let next = 0;
  let tokens = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < REQUESTS) {
        const prompt = prompts[next++ % prompts.length]!;
        const response = await fetch(`${url}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'lm', prompt, max_tokens: MAX_TOKENS, temperature: 0 }),
        });
        tokens += ((await response.json()) as { usage: { completion_tokens: number } }).usage
          .completion_tokens;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  child.kill('SIGTERM');
  await once(child, 'exit');
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))!;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  rmSync(dir, { recursive: true, force: true });
  return { profile, tokens, seconds };
}

async function main(): Promise<void> {
  const runs = [];
  for (const clients of CLIENTS) {
    const run = await profiled(clients);
    runs.push({ clients, ...run, ...selfTimes(run.profile) });
    console.log(
      `${clients} clients: ${run.tokens} tokens in ${run.seconds.toFixed(1)} s (${(run.tokens / run.seconds).toFixed(0)} tok/s)`,
    );
  }
  const perToken = (ms: number | undefined, tokens: number) =>
    (((ms ?? 0) * 1000) / tokens).toFixed(1);
  console.log(
    `\nCPU µs per generated token, by part of the stack (self time; idle excluded from the total):`,
  );
  console.log(`| part | ${runs.map((r) => `${r.clients} clients`).join(' | ')} |`);
  console.log(`|---|${runs.map(() => '--:').join('|')}|`);
  const partNames = [...PARTS.map(([name]) => name), 'other'];
  for (const part of partNames) {
    console.log(
      `| ${part} | ${runs.map((r) => perToken(r.parts.get(part), r.tokens)).join(' | ')} |`,
    );
  }
  console.log(`\nThe wasm kernels' µs per token by the @lethe/model function that ran them:`);
  console.log(`| function | ${runs.map((r) => `${r.clients} clients`).join(' | ')} |`);
  console.log(`|---|${runs.map(() => '--:').join('|')}|`);
  const callers = [...runs[runs.length - 1]!.kernelsBy].sort((a, b) => b[1] - a[1]).slice(0, 10);
  for (const [caller] of callers) {
    console.log(
      `| ${caller} | ${runs.map((r) => perToken(r.kernelsBy.get(caller), r.tokens)).join(' | ')} |`,
    );
  }
  for (const run of runs) {
    console.log(`\n${run.clients} clients: the 20 functions with the most self time, µs per token`);
    const top = [...run.functions]
      .filter(([name]) => !name.startsWith('(idle)') && !name.startsWith('(program)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20);
    for (const [name, ms] of top) console.log(`  ${perToken(ms, run.tokens).padStart(7)}  ${name}`);
  }
}

await main();
