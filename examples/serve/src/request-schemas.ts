/**
 * JSON schemas of the request bodies, checked by the framework (ajv) before a handler runs, with
 * no type coercion and no unknown fields: a field of the OpenAI API the server does not implement
 * is refused by name rather than silently ignored. Every optional field also takes `null` (the
 * API's "not given"). Ranges the schema cannot know (the model's context and vocabulary, the
 * server's `max_tokens` cap, the policy names), the prompt's elements and the fields accepted
 * only at their default (`best_of: 1`, `store: false`, …; see `request-defaults.ts`) are checked
 * by the handlers.
 */

/** Most choices one request may ask for (`n`). */
export const MAX_CHOICES = 8;
/** Most stop sequences (the OpenAI API's limit). */
export const MAX_STOP_SEQUENCES = 4;
/** Most alternatives a completion's `logprobs` may ask for (the OpenAI API's limit). */
export const MAX_COMPLETION_LOGPROBS = 5;
/** Most alternatives a chat's `top_logprobs` may ask for (the OpenAI API's limit). */
export const MAX_TOP_LOGPROBS = 20;

/** `type` with `null` added. */
const nullable = <T extends string>(type: T) => ({ type: [type, 'null'] }) as const;

/** A budget fraction: in (0, 1]. */
const fraction = { type: 'number', exclusiveMinimum: 0, maximum: 1 } as const;

/**
 * The per-request `lethe` extension: the memory policy (or a composition, `h2o+sol-fixed`), its
 * budget — a fraction, or for a composition one per part (`{ "h2o": 0.25, "sol-fixed": 0.5 }`;
 * the range of a number applies to numbers only, the parts are checked by the handler) — and
 * options (for a composition, keyed by part).
 */
const letheExtension = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    policy: { type: ['string', 'null'], minLength: 1 },
    budget: {
      type: ['number', 'object', 'null'],
      exclusiveMinimum: 0,
      maximum: 1,
      additionalProperties: fraction,
    },
    options: nullable('object'),
  },
} as const;

const stop = {
  anyOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      maxItems: MAX_STOP_SEQUENCES,
    },
    { type: 'null' },
  ],
} as const;

const penalty = { type: ['number', 'null'], minimum: -2, maximum: 2 } as const;

/** Fields both endpoints take. */
const sampling = {
  model: { type: 'string', minLength: 1 },
  max_tokens: { type: ['integer', 'null'], minimum: 0 },
  temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
  top_p: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1 },
  n: { type: ['integer', 'null'], minimum: 1, maximum: MAX_CHOICES },
  stream: nullable('boolean'),
  stream_options: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { include_usage: nullable('boolean') },
  },
  stop,
  seed: { type: ['integer', 'null'], minimum: 0, maximum: 2 ** 53 - 1 },
  user: nullable('string'),
  presence_penalty: penalty,
  frequency_penalty: penalty,
  logit_bias: {
    type: ['object', 'null'],
    maxProperties: 1024,
    propertyNames: { pattern: '^(0|[1-9][0-9]{0,8})$' },
    additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
  },
  /** Extension (vLLM's): keep the k most likely tokens; 0 or −1: all. */
  top_k: { type: ['integer', 'null'], minimum: -1 },
  /** Extension (vLLM's, Hugging Face's): keep tokens at least `min_p` times as likely as the most likely. */
  min_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
  lethe: letheExtension,
} as const;

/** `POST /v1/completions`. */
export const completionBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'prompt'],
  properties: {
    ...sampling,
    // its elements are checked by the handler, which names the one at fault (`prompt.1.3`)
    prompt: { type: ['string', 'array'] },
    logprobs: { type: ['integer', 'null'], minimum: 0, maximum: MAX_COMPLETION_LOGPROBS },
    echo: nullable('boolean'),
    best_of: { type: ['integer', 'null'], minimum: 1 },
    suffix: nullable('string'),
  },
} as const;

const messageContent = {
  anyOf: [
    { type: 'string' },
    {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'text'],
        properties: { type: { const: 'text' }, text: { type: 'string' } },
      },
    },
  ],
} as const;

/** `POST /v1/chat/completions`. */
export const chatBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'messages'],
  properties: {
    ...sampling,
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
    logprobs: nullable('boolean'),
    top_logprobs: { type: ['integer', 'null'], minimum: 0, maximum: MAX_TOP_LOGPROBS },
    response_format: { type: ['object', 'null'] },
    store: nullable('boolean'),
    // without tools, whether they may be called in parallel asks for nothing: any boolean
    parallel_tool_calls: nullable('boolean'),
    tools: nullable('array'),
    tool_choice: { type: ['string', 'object', 'null'] },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['role', 'content'],
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant'] },
          content: messageContent,
          name: nullable('string'),
        },
      },
    },
  },
} as const;

/** The `lethe` extension as the handlers read it. */
export interface LetheExtension {
  readonly policy?: string | null;
  /** One fraction, or a composition's fraction per part. */
  readonly budget?: number | Readonly<Record<string, number>> | null;
  readonly options?: Record<string, unknown> | null;
}

/** What both bodies share, after the schema (`null` is "not given"). */
export interface SamplingBody {
  readonly model: string;
  readonly max_tokens?: number | null;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly n?: number | null;
  readonly stream?: boolean | null;
  readonly stream_options?: { readonly include_usage?: boolean | null } | null;
  readonly stop?: string | readonly string[] | null;
  readonly seed?: number | null;
  readonly user?: string | null;
  readonly presence_penalty?: number | null;
  readonly frequency_penalty?: number | null;
  readonly logit_bias?: Readonly<Record<string, number>> | null;
  readonly top_k?: number | null;
  readonly min_p?: number | null;
  readonly lethe?: LetheExtension | null;
}

/** A completion request body, after the schema (the prompt's elements not yet checked). */
export interface CompletionBody extends SamplingBody {
  readonly prompt: string | readonly unknown[];
  readonly logprobs?: number | null;
  readonly echo?: boolean | null;
  readonly best_of?: number | null;
  readonly suffix?: string | null;
}

/** One chat message, after the schema. */
export interface ChatMessage {
  readonly role: 'system' | 'developer' | 'user' | 'assistant';
  readonly content: string | readonly { readonly type: 'text'; readonly text: string }[];
  readonly name?: string | null;
}

/** A chat request body, after the schema. */
export interface ChatBody extends SamplingBody {
  readonly messages: readonly ChatMessage[];
  readonly max_completion_tokens?: number | null;
  readonly logprobs?: boolean | null;
  readonly top_logprobs?: number | null;
  readonly response_format?: Readonly<Record<string, unknown>> | null;
  readonly store?: boolean | null;
  readonly parallel_tool_calls?: boolean | null;
  readonly tools?: readonly unknown[] | null;
  readonly tool_choice?: string | Readonly<Record<string, unknown>> | null;
}
