import { COMPOSITION_SEPARATOR, type PolicyRegistry } from '@lethe/kv-cache';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { answerJob, type GenerationJob } from './answer-job';
import { ApiError, toApiError } from './api-error';
import { checkApiKey, needsApiKey } from './api-key';
import { chatJob, completionJob, type RequestLimits, servedModel } from './job-builders';
import { type LearnedPolicy, RequestPolicies } from './request-policy';
import {
  type ChatBody,
  type CompletionBody,
  chatBodySchema,
  completionBodySchema,
} from './request-schemas';
import type { ServedModel } from './served-model';
import { type EngineGauges, ServerMetrics } from './server-metrics';

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** The models it answers for, by id: loaded at start-up from the directories it was given. */
  readonly models: ReadonlyMap<string, ServedModel>;
  /** The heuristic policies requests may name (`lethe.policy`). */
  readonly registry: PolicyRegistry;
  /** Trained policies loaded at start-up (`loadLearnedPolicy`), by the name requests use. */
  readonly learned?: ReadonlyMap<string, LearnedPolicy>;
  /** Request limits: the `max_tokens` cap. */
  readonly limits: RequestLimits;
  /** Largest request body in bytes (default 1 MiB); larger → 413. */
  readonly bodyLimit?: number;
  /**
   * When set, every route but `/health` and `/metrics` requires `Authorization: Bearer <apiKey>`
   * (401 otherwise), decided on the route the router matched.
   */
  readonly apiKey?: string;
  /**
   * Most ms a client may take to send a whole request, headers and body (default 30 s); slower →
   * 408 and the connection closed, so a client that sends half a body and stops holds nothing.
   */
  readonly requestTimeout?: number;
  /** Most ms an idle keep-alive connection stays open between requests (default 5 s). */
  readonly keepAliveTimeout?: number;
  /** The framework's logger option (pino): `false` for none, `true` or pino options for JSON logs. */
  readonly logger?: FastifyServerOptions['logger'];
}

/**
 * The OpenAI-compatible HTTP server (fastify): `POST /v1/completions`,
 * `POST /v1/chat/completions` (streamed or not), `GET /v1/models`, `GET /v1/policies` (what
 * `lethe.policy` may name, with budget forms and options, and a note on compositions), `GET /health`,
 * `GET /metrics` (Prometheus). Request bodies are checked against JSON schemas (no coercion,
 * unknown fields refused by name); every error is answered in the OpenAI shape naming the field.
 * Closing the server (`close()`) stops accepting requests, lets the running ones finish, then
 * drains and closes every model's batch.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const requestTimeout = options.requestTimeout ?? 30_000;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestTimeout,
    keepAliveTimeout: options.keepAliveTimeout ?? 5_000,
    // Node checks the request timeouts every `connectionsCheckingInterval` ms (30 s by default)
    http: {
      requestTimeout,
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: Math.min(1_000, requestTimeout),
    },
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        allowUnionTypes: true,
      },
    },
  });
  const { models } = options;
  const policies = new RequestPolicies(options.registry, options.learned);
  const metrics = new ServerMetrics(() => {
    const gauges = new Map<string, EngineGauges>();
    for (const [id, served] of models) {
      const stats = served.batcher.stats();
      gauges.set(id, {
        queued: stats.queued,
        active: stats.active,
        kvEntries: stats.kvEntries,
        evictions: stats.evictedEntries,
      });
    }
    return gauges;
  });
  for (const [id, served] of models) {
    served.onToken = (sinceLast, first) => metrics.token(id, sinceLast, first);
  }
  let draining = false;

  app.addHook('onRequest', async (request, reply) => {
    // the route the router matched (its pattern), not the raw target a client spelled
    const route = request.routeOptions.url;
    reply.raw.on('finish', () => {
      metrics.request(route ?? 'unknown', reply.raw.statusCode);
      // a response that ends during the drain closes its connection, so that no pooled client
      // keeps the process alive (a stream started before the drain sent `keep-alive`)
      if (draining) request.raw.socket?.end?.();
    });
    if (draining && route !== '/metrics') {
      throw new ApiError(503, 'the server is shutting down', 'server_error', null, 'shutting_down');
    }
    if (options.apiKey !== undefined && needsApiKey(route)) {
      checkApiKey(request.headers.authorization, options.apiKey);
    }
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (draining) void reply.header('connection', 'close');
    return payload;
  });
  app.setErrorHandler((error, request, reply) => {
    const api = toApiError(error);
    if (api.status >= 500) request.log.error({ err: error }, 'request failed');
    if (api.retryAfter !== undefined) void reply.header('retry-after', String(api.retryAfter));
    return reply.status(api.status).send(api.body());
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(
        new ApiError(404, `no route ${request.method} ${request.url}`, 'not_found_error').body(),
      ),
  );

  app.get('/health', async () => ({ status: 'ok', models: [...models.keys()] }));
  app.get('/metrics', async (_request, reply) =>
    reply.header('content-type', metrics.contentType).send(await metrics.text()),
  );
  app.get('/v1/models', async () => ({
    object: 'list',
    data: [...models.values()].map(modelObject),
  }));
  app.get('/v1/policies', async () => ({
    object: 'list',
    data: policies.listing(),
    composition: `lethe.policy may join two or more of these that fill different slots with "${COMPOSITION_SEPARATOR}" (h2o${COMPOSITION_SEPARATOR}sol-fixed); lethe.budget and lethe.options may then be keyed by part`,
  }));
  app.get<{ Params: { id: string } }>('/v1/models/:id', async (request) =>
    modelObject(servedModel(models, request.params.id)),
  );
  /** A generation endpoint: the body checked by `schema`, turned into a job by `toJob`, answered. */
  const generation = <B extends CompletionBody | ChatBody>(
    url: string,
    schema: object,
    toJob: (
      body: B,
      models: ReadonlyMap<string, ServedModel>,
      policies: RequestPolicies,
      limits: RequestLimits,
    ) => Promise<GenerationJob>,
  ) =>
    app.post(url, { schema: { body: schema } }, async (request, reply) => {
      // the schema has checked the body's shape
      const job = await toJob(request.body as B, models, policies, options.limits);
      try {
        return await answerJob(job, reply, () => draining);
      } finally {
        job.policy.release();
      }
    });
  generation<CompletionBody>('/v1/completions', completionBodySchema, completionJob);
  generation<ChatBody>('/v1/chat/completions', chatBodySchema, chatJob);
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onClose', async () => {
    await Promise.all([...models.values()].map((served) => served.batcher.close()));
    for (const learned of options.learned?.values() ?? []) learned.prepared.release();
  });
  return app;
}

/** `GET /v1/models` entry. */
function modelObject(served: ServedModel) {
  return { id: served.id, object: 'model', created: served.created, owned_by: 'lethe' };
}
