import { randomInt, randomUUID } from 'node:crypto';
import type { GenerationJob } from './answer-job';
import { ApiError, invalidRequest } from './api-error';
import { completionPrompts } from './completion-prompts';
import type { Endpoint } from './openai-shapes';
import { checkPromptChars } from './prompt-char-limit';
import { checkDefaultsOnly } from './request-defaults';
import type { RequestPolicies } from './request-policy';
import { samplingOf } from './request-sampling';
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
  checkDefaultsOnly(body, 'completions');
  const entries = completionPrompts(body.prompt, served.model.config.vocab_size);
  const prompts = entries.map(({ prompt, param }) => {
    if (typeof prompt !== 'string') return prompt;
    checkPromptChars(prompt, served.maxPromptChars, param);
    return served.encode(prompt, 'completion');
  });
  const echo = body.echo === true;
  if (body.max_tokens === 0 && !echo) {
    throw invalidRequest(
      'max_tokens',
      'max_tokens: must be at least 1 (0 only with echo, to score the prompt)',
    );
  }
  return job({
    endpoint: 'completions',
    body,
    served,
    prompts,
    promptParam: 'prompt',
    defaultTokens: COMPLETION_DEFAULT_TOKENS,
    policies,
    limits,
    logprobs: body.logprobs ?? undefined,
    echo: echo
      ? entries.map(({ prompt }, i) =>
          typeof prompt === 'string'
            ? prompt
            : served.tokenizer.decode(onlyTokenizerIds(prompts[i]!, served), {
                skipSpecialTokens: true,
              }),
        )
      : undefined,
  });
}

/** A `POST /v1/chat/completions` body as a job: the messages rendered by the model's chat template. */
export async function chatJob(
  body: ChatBody,
  models: ReadonlyMap<string, ServedModel>,
  policies: RequestPolicies,
  limits: RequestLimits,
): Promise<GenerationJob> {
  const served = servedModel(models, body.model);
  checkDefaultsOnly(body, 'chat');
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
  if (body.max_tokens === 0) throw invalidRequest('max_tokens', 'max_tokens: must be at least 1');
  if ((body.top_logprobs ?? 0) > 0 && body.logprobs !== true) {
    throw invalidRequest('top_logprobs', 'top_logprobs: needs logprobs: true');
  }
  const messages = body.messages.map((message) => ({
    role: message.role === 'developer' ? 'system' : message.role,
    content:
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part) => part.text).join(''),
  }));
  const text = served.chat.render(messages, { addGenerationPrompt: true });
  checkPromptChars(text, served.maxPromptChars, 'messages');
  const prompt = served.encode(text, 'chat');
  const merged: SamplingBody = {
    ...body,
    max_tokens: body.max_tokens ?? body.max_completion_tokens,
  };
  return job({
    endpoint: 'chat',
    body: merged,
    served,
    prompts: [prompt],
    promptParam: 'messages',
    defaultTokens: undefined,
    policies,
    limits,
    logprobs: body.logprobs === true ? (body.top_logprobs ?? 0) : undefined,
    echo: undefined,
  });
}

/** A prompt's ids the tokenizer can write (a padded vocabulary's extra ids have no text). */
function onlyTokenizerIds(prompt: Int32Array, served: ServedModel): Int32Array {
  return prompt.filter((id) => id < served.tokenizer.vocabSize);
}

/** What {@link job} builds a job from. */
interface JobParts {
  readonly endpoint: Endpoint;
  readonly body: SamplingBody;
  readonly served: ServedModel;
  readonly prompts: readonly Int32Array[];
  /** The field the prompts came from (`prompt`, `messages`). */
  readonly promptParam: string;
  /** `max_tokens` when none is given; undefined: the rest of the context, up to the cap. */
  readonly defaultTokens: number | undefined;
  readonly policies: RequestPolicies;
  readonly limits: RequestLimits;
  /** Alternatives per logprobs position, or undefined for no logprobs. */
  readonly logprobs: number | undefined;
  /** Each prompt's text to echo, or undefined. */
  readonly echo: readonly string[] | undefined;
}

/**
 * The parts both endpoints share: `max_tokens` (default: a completion's 16, a chat's whole
 * remaining context up to the server's cap), the prompts against the model's context, `n`
 * against what the model's batch can ever hold, sampling (see `samplingOf`; a request without a
 * seed gets a random one), stop sequences, and the policy.
 */
async function job(parts: JobParts): Promise<GenerationJob> {
  const { endpoint, body, served, prompts, promptParam, limits } = parts;
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
    body.max_tokens ?? parts.defaultTokens ?? Math.min(limits.maxTokens, context - longest + 1);
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
  const n = body.n ?? 1;
  if (n * prompts.length > served.capacity) {
    throw invalidRequest(
      prompts.length > 1 ? promptParam : 'n',
      `asks for ${n * prompts.length} sequences (n ${n} × ${prompts.length} prompts); this server runs at most ${served.capacity} at once for "${served.id}", queue included`,
    );
  }
  const sampling = samplingOf(body, served.model.config.vocab_size);
  const stop =
    body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : [...body.stop];
  const policy = await parts.policies.prepare(body.lethe ?? undefined, served.id);
  return {
    endpoint,
    header: {
      id: `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID().replaceAll('-', '')}`,
      created: Math.floor(Date.now() / 1000),
      model: served.id,
    },
    served,
    prompts,
    n,
    maxTokens,
    sampling,
    seed: body.seed ?? randomInt(2 ** 31),
    stop,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    logprobs: parts.logprobs,
    echo: parts.echo,
    policy,
  };
}
