// The OpenAI-compatible server, e.g.
//   npm run serve -- --model countdown=../../models/countdown --model lm=../../models/lm
//   npm run serve -- --model qwen=../../fixtures/hf/tiny-qwen2 --port 8000 --api-key secret
//   npm run serve -- --model lm=../../models/lm --policy sol-lm=../../models/sol-lm
//   npm run serve -- --model lm=../../models/lm --policy sol-lm=../../models/sol-lm \
//     --policy-options 'sol-lm={"refresh":false}'
// Models come only from the directories given here; requests name them by id.

import { LetheError } from '@lethe/core';
import { parseIntegerFlag } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { createDefaultRegistry } from '@lethe/policies';
import { activeBackend, initBackend } from '@lethe/tensor';
import { Command } from 'commander';
import { loadLearnedPolicy } from './load-learned-policy';
import { loadServedModel } from './load-served-model';
import { policyOptionsOf } from './policy-options-flag';
import type { LearnedPolicy } from './request-policy';
import type { ServedModel } from './served-model';
import { createServer } from './server';

const int = (flag: string, min: number) => (text: string) => parseIntegerFlag(text, flag, min);

/** A repeatable `name=<value>` flag (the value after the first `=`). */
function pairFlag(flag: string, value = 'directory') {
  return (text: string, previous: [string, string][] = []): [string, string][] => {
    const at = text.indexOf('=');
    if (at <= 0 || at === text.length - 1) {
      throw new LetheError('E_ARG', `expected name=${value}, got "${text}"`, flag);
    }
    const name = text.slice(0, at);
    if (previous.some(([given]) => given === name)) {
      throw new LetheError('E_ARG', `"${name}" is given twice`, flag);
    }
    return [...previous, [name, text.slice(at + 1)]];
  };
}

const program = new Command()
  .name('lethe-serve')
  .description(
    'OpenAI-compatible server with continuous batching and per-request KV-cache policies.',
  )
  .requiredOption(
    '--model <id=dir>',
    'a model to serve under an id (repeatable)',
    pairFlag('--model'),
  )
  .option(
    '--policy <name=dir>',
    'a trained policy directory (SOL, GSA, NAMM) requests may name in lethe.policy (repeatable)',
    pairFlag('--policy'),
  )
  .option(
    '--policy-options <name=json>',
    'options over the trained ones for a --policy, fixed for every request, e.g. sol-lm=\'{"refresh":false}\' to compose it with an eviction policy (repeatable)',
    pairFlag('--policy-options', 'json'),
  )
  .option('--host <address>', 'address to bind', '127.0.0.1')
  .option('--port <n>', 'port', int('--port', 0), 8000)
  .option(
    '--api-key <key>',
    'require Authorization: Bearer <key> on every route but /health and /metrics (default: $LETHE_API_KEY)',
  )
  .option(
    '--request-timeout <ms>',
    'most ms a client may take to send a whole request (slower: 408, connection closed)',
    int('--request-timeout', 1),
    30_000,
  )
  .option(
    '--keep-alive-timeout <ms>',
    'most ms an idle keep-alive connection stays open',
    int('--keep-alive-timeout', 1),
    5_000,
  )
  .option(
    '--max-sequences <n>',
    'sequences decoding at once per model',
    int('--max-sequences', 1),
    64,
  )
  .option('--max-queue <n>', 'requests waiting per model before 429', int('--max-queue', 0), 256)
  .option('--max-tokens <n>', 'largest max_tokens a request may ask', int('--max-tokens', 1), 1024)
  .option('--body-limit <bytes>', 'largest request body', int('--body-limit', 1), 1024 * 1024)
  .option(
    '--prefill-chunk <n>',
    'prompt tokens prefilled per step while others decode',
    int('--prefill-chunk', 1),
    256,
  )
  .option('--backend <name>', 'tfjs backend: wasm (default), cpu, webgpu', 'wasm');

async function main(): Promise<void> {
  // `pnpm run serve -- --model …` passes its `--` on (npm drops it): a leading one is no operand
  const args = process.argv.slice(2);
  program.parse(args[0] === '--' ? args.slice(1) : args, { from: 'user' });
  const flags = program.opts<{
    model: [string, string][];
    policy?: [string, string][];
    policyOptions?: [string, string][];
    host: string;
    port: number;
    apiKey?: string;
    maxSequences: number;
    maxQueue: number;
    maxTokens: number;
    bodyLimit: number;
    requestTimeout: number;
    keepAliveTimeout: number;
    prefillChunk: number;
    backend: string;
  }>();
  await initBackend(flags.backend as 'wasm');
  const models = new Map<string, ServedModel>();
  for (const [id, dir] of flags.model) {
    models.set(
      id,
      await loadServedModel(id, dir, {
        maxSequences: flags.maxSequences,
        maxQueue: flags.maxQueue,
        prefillChunk: flags.prefillChunk,
      }),
    );
  }
  const registry = createDefaultRegistry();
  const policyOptions = policyOptionsOf(
    flags.policyOptions ?? [],
    (flags.policy ?? []).map(([name]) => name),
  );
  const learned = new Map<string, LearnedPolicy>();
  for (const [name, dir] of flags.policy ?? []) {
    if (registry.names().includes(name)) {
      throw new LetheError(
        'E_ARG',
        `"${name}" is a built-in policy's name: choose another`,
        '--policy',
      );
    }
    learned.set(
      name,
      await loadLearnedPolicy(name, dir, registry, models, policyOptions.get(name)),
    );
  }
  const app = createServer({
    models,
    registry,
    learned,
    limits: { maxTokens: flags.maxTokens },
    bodyLimit: flags.bodyLimit,
    requestTimeout: flags.requestTimeout,
    keepAliveTimeout: flags.keepAliveTimeout,
    apiKey: flags.apiKey ?? process.env.LETHE_API_KEY,
    logger: true,
  });
  const shutdown = (signal: string) => {
    app.log.info({ signal }, 'draining: no new requests, running ones finish');
    app.close().then(
      () => process.exit(0),
      (error) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  // which backend the models run on (on webgpu the requests' KV caches live on the device)
  app.log.info({ backend: activeBackend() }, 'tensor backend');
  await app.listen({ host: flags.host, port: flags.port });
}

await runMain(main);
