import { randomInt, randomUUID } from 'node:crypto';
import type { GenerationJob } from './answer-job';
import { ApiError, invalidRequest } from './api-error';
import type { Endpoint } from './openai-shapes';
import type { RequestPolicies } from './request-policy';
import type { ChatBody, CompletionBody, SamplingBody } from './request-schemas';
import type { ServedModel } from './served-model';

/** The server's limits a request is checked against. */
export interface RequestLimits {
  /** Most tokens one choice may generate (`max_tokens` above it → 400). */
  readonly maxTokens: number;
}

/** `max_tokens` of a completion when the request gives none (the OpenAI API's default). */
const COMPLETION_DEFAULT_TOKENS = 16;

/** The model a request names (404 naming `model` when the server has no such model). */
export function servedModel(models: ReadonlyMap<string, ServedModel>, id: string): ServedModel {
  const served = models.get(id);
  if (served === undefined) {
    throw new ApiError(
      404,
      `The model "${id}" does not exist on this server (it has ${[...models.keys()].join(', ')})`,
      'not_found_error',
      'model',
      'model_not_found',
    );
  }
  return served;
}

/** A `POST /v1/completions` body as a job: text prompts encoded, token prompts checked. */
export async function completionJob(
  body: CompletionBody,
  models: ReadonlyMap<string, ServedModel>,
  policies: RequestPolicies,
  limits: RequestLimits,
): Promise<GenerationJob> {
  const served = servedModel(models, body.model);
  const raw = body.prompt;
  // one prompt (text, or token ids), or a list of them
  const single = typeof raw === 'string' || typeof raw[0] === 'number';
  const list = (single ? [raw] : raw) as readonly (string | readonly number[])[];
  const prompts = list.map((prompt, i) => {
    const param = single ? 'prompt' : `prompt.${i}`;
    if (typeof prompt === 'string') {
      return served.encode(prompt, 'completion');
    }
    const vocab = served.model.config.vocab_size;
    const bad = prompt.find((id) => id >= vocab);
    if (bad !== undefined) {
      throw invalidRequest(
        param,
        `token id ${bad} is not below the model's vocabulary size ${vocab}`,
      );
    }
    return Int32Array.from(prompt);
  });
  return job(
    'completions',
    body,
    served,
    prompts,
    'prompt',
    COMPLETION_DEFAULT_TOKENS,
    policies,
    limits,
  );
}

/** A `POST /v1/chat/completions` body as a job: the messages rendered by the model's chat template. */
export async function chatJob(
  body: ChatBody,
  models: ReadonlyMap<string, ServedModel>,
  policies: RequestPolicies,
  limits: RequestLimits,
): Promise<GenerationJob> {
  const served = servedModel(models, body.model);
  if (served.chat === undefined) {
    throw invalidRequest(
      'model',
      `"${served.id}" has no chat template (its directory has no tokenizer_config.json chat_template): use /v1/completions`,
      'no_chat_template',
    );
  }
  if (body.max_tokens != null && body.max_completion_tokens != null) {
    throw invalidRequest(
      'max_completion_tokens',
      'give max_tokens or max_completion_tokens, not both',
    );
  }
  const messages = body.messages.map((message) => ({
    role: message.role === 'developer' ? 'system' : message.role,
    content:
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part) => part.text).join(''),
  }));
  const text = served.chat.render(messages, { addGenerationPrompt: true });
  const prompt = served.encode(text, 'chat');
  const merged: SamplingBody = {
    ...body,
    max_tokens: body.max_tokens ?? body.max_completion_tokens,
  };
  return job('chat', merged, served, [prompt], 'messages', undefined, policies, limits);
}

/**
 * The parts both endpoints share: `max_tokens` (default: a completion's 16, a chat's whole
 * remaining context up to the server's cap), the prompts against the model's context, sampling
 * defaults (temperature 1, top_p 1; a request without a seed gets a random one), stop sequences,
 * and the policy.
 */
async function job(
  endpoint: Endpoint,
  body: SamplingBody,
  served: ServedModel,
  prompts: readonly Int32Array[],
  promptParam: string,
  defaultTokens: number | undefined,
  policies: RequestPolicies,
  limits: RequestLimits,
): Promise<GenerationJob> {
  const context = served.model.config.max_position_embeddings;
  const longest = Math.max(...prompts.map((prompt) => prompt.length));
  const empty = prompts.findIndex((prompt) => prompt.length === 0);
  if (empty !== -1) {
    throw invalidRequest(
      prompts.length > 1 ? `${promptParam}.${empty}` : promptParam,
      'is empty: there is no token to continue from',
    );
  }
  if (longest >= context) {
    throw invalidRequest(
      promptParam,
      `has ${longest} tokens; the model's context is ${context}, which leaves no room to generate`,
      'context_length_exceeded',
    );
  }
  const maxTokens =
    body.max_tokens ?? defaultTokens ?? Math.min(limits.maxTokens, context - longest + 1);
  if (maxTokens > limits.maxTokens) {
    throw invalidRequest(
      'max_tokens',
      `must be at most ${limits.maxTokens} on this server, got ${maxTokens}`,
    );
  }
  // the last generated token is never fed back: prompt + max_tokens − 1 positions
  if (longest + maxTokens - 1 > context) {
    throw invalidRequest(
      'max_tokens',
      `${maxTokens} tokens after a prompt of ${longest} pass the model's context of ${context} (at most ${context - longest + 1})`,
      'context_length_exceeded',
    );
  }
  const stop =
    body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : [...body.stop];
  const policy = await policies.prepare(body.lethe, served.id);
  return {
    endpoint,
    header: {
      id: `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID().replaceAll('-', '')}`,
      created: Math.floor(Date.now() / 1000),
      model: served.id,
    },
    served,
    prompts,
    n: body.n ?? 1,
    maxTokens,
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    seed: body.seed ?? randomInt(2 ** 31),
    stop,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    policy,
  };
}
