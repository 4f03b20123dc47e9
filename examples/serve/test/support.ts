import { fileURLToPath } from 'node:url';
import { createDefaultRegistry } from '@lethe/policies';
import { initBackend } from '@lethe/tensor';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { loadLearnedPolicy } from '../src/load-learned-policy';
import { type BatchLimits, loadServedModel } from '../src/load-served-model';
import type { LearnedPolicy } from '../src/request-policy';
import type { ServedModel } from '../src/served-model';
import { createServer, type ServerOptions } from '../src/server';

/** A directory of the repository, from this file. */
export function repoPath(relative: string): string {
  return fileURLToPath(new URL(`../../../${relative}`, import.meta.url));
}

/** A running server on an ephemeral port, its models, and an official client pointed at it. */
export interface TestServer {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly models: ReadonlyMap<string, ServedModel>;
  readonly client: OpenAI;
}

/**
 * Starts a server on 127.0.0.1 with the given models and trained policies (`name → directory`,
 * with `policyOptions[name]` over the trained options, as `--policy-options` gives them).
 */
export async function startServer(
  dirs: Record<string, string>,
  limits: Partial<BatchLimits> = {},
  options: Partial<ServerOptions> = {},
  policyDirs: Record<string, string> = {},
  policyOptions: Record<string, Record<string, unknown>> = {},
): Promise<TestServer> {
  await initBackend('wasm');
  const models = new Map<string, ServedModel>();
  for (const [id, dir] of Object.entries(dirs)) {
    models.set(
      id,
      await loadServedModel(id, dir, {
        maxSequences: limits.maxSequences ?? 16,
        maxQueue: limits.maxQueue ?? 64,
        prefillChunk: limits.prefillChunk ?? 64,
      }),
    );
  }
  const registry = createDefaultRegistry();
  const learned = new Map<string, LearnedPolicy>();
  for (const [name, dir] of Object.entries(policyDirs)) {
    learned.set(name, await loadLearnedPolicy(name, dir, registry, models, policyOptions[name]));
  }
  const app = createServer({
    models,
    registry,
    learned,
    limits: { maxTokens: 256 },
    ...options,
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const client = new OpenAI({
    apiKey: options.apiKey ?? 'unused',
    baseURL: `${address}/v1`,
    maxRetries: 0,
  });
  return { app, url: address, models, client };
}
