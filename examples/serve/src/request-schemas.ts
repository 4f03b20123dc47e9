/**
 * JSON schemas of the request bodies, checked by the framework (ajv) before a handler runs, with
 * no type coercion and no unknown fields: a field of the OpenAI API the server does not implement
 * is refused by name rather than silently ignored. Ranges the schema cannot know (the model's
 * context, the server's `max_tokens` cap, the policy names) are checked by the handlers.
 */

/** Most choices one request may ask for (`n`). */
export const MAX_CHOICES = 8;
/** Most stop sequences (the OpenAI API's limit). */
export const MAX_STOP_SEQUENCES = 4;

const tokenIds = { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1 } as const;

/** The per-request `lethe` extension: the memory policy, its budget and options. */
const letheExtension = {
  type: 'object',
  additionalProperties: false,
  properties: {
    policy: { type: 'string', minLength: 1 },
    budget: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    options: { type: 'object' },
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

/** Fields both endpoints take. */
const sampling = {
  model: { type: 'string', minLength: 1 },
  max_tokens: { type: ['integer', 'null'], minimum: 1 },
  temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
  top_p: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1 },
  n: { type: ['integer', 'null'], minimum: 1, maximum: MAX_CHOICES },
  stream: { type: ['boolean', 'null'] },
  stream_options: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { include_usage: { type: 'boolean' } },
  },
  stop,
  seed: { type: ['integer', 'null'], minimum: 0, maximum: 2 ** 53 - 1 },
  user: { type: 'string' },
  lethe: letheExtension,
} as const;

/** `POST /v1/completions`. */
export const completionBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'prompt'],
  properties: {
    ...sampling,
    prompt: {
      anyOf: [
        { type: 'string' },
        { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_CHOICES },
        tokenIds,
        { type: 'array', items: tokenIds, minItems: 1, maxItems: MAX_CHOICES },
      ],
    },
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
          name: { type: 'string' },
        },
      },
    },
  },
} as const;

/** The `lethe` extension as the handlers read it. */
export interface LetheExtension {
  readonly policy?: string;
  readonly budget?: number;
  readonly options?: Record<string, unknown>;
}

/** What both bodies share, after the schema. */
export interface SamplingBody {
  readonly model: string;
  readonly max_tokens?: number | null;
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly n?: number | null;
  readonly stream?: boolean | null;
  readonly stream_options?: { readonly include_usage?: boolean } | null;
  readonly stop?: string | readonly string[] | null;
  readonly seed?: number | null;
  readonly user?: string;
  readonly lethe?: LetheExtension;
}

/** A completion request body, after the schema. */
export interface CompletionBody extends SamplingBody {
  readonly prompt: string | readonly string[] | readonly number[] | readonly (readonly number[])[];
}

/** One chat message, after the schema. */
export interface ChatMessage {
  readonly role: 'system' | 'developer' | 'user' | 'assistant';
  readonly content: string | readonly { readonly type: 'text'; readonly text: string }[];
  readonly name?: string;
}

/** A chat request body, after the schema. */
export interface ChatBody extends SamplingBody {
  readonly messages: readonly ChatMessage[];
  readonly max_completion_tokens?: number | null;
}
