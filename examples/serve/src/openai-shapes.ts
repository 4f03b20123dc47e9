import type { CacheReport } from './choice-run';
import type { PolicyChoice } from './request-policy';
import { chatLogprobs, completionLogprobs, type LogprobEntry } from './token-logprobs';

/** Which endpoint a response belongs to: its object names and its choice shape follow. */
export type Endpoint = 'completions' | 'chat';

/** `finish_reason` of a choice. */
export type FinishReason = 'stop' | 'length';

/** Token counts of a response. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** What a finished choice contributes to a response. */
export interface FinishedChoice {
  readonly index: number;
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cache: CacheReport;
  /** Its logprobs entries, when the request asked for them. */
  readonly logprobs?: readonly LogprobEntry[];
}

/** A choice's `logprobs` in the endpoint's shape, or null when none were asked for. */
function logprobsOf(endpoint: Endpoint, entries: readonly LogprobEntry[] | undefined) {
  if (entries === undefined) return null;
  return endpoint === 'chat' ? chatLogprobs(entries) : completionLogprobs(entries);
}

/** The identity every object and chunk of one response shares. */
export interface ResponseHeader {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/**
 * The `lethe` field next to `usage`: the policy and budget the request ran with and, per
 * choice in index order, what its cache held (live and peak entries per layer), the evictions it performed and
 * the realised budget (peak / full-cache length).
 */
export function letheReport(policy: PolicyChoice, choices: readonly FinishedChoice[]) {
  return {
    policy: policy.name,
    budget: policy.budget,
    cache: [...choices]
      .sort((a, b) => a.index - b.index)
      .map((choice) => ({ index: choice.index, ...choice.cache })),
  };
}

/** `usage` summed over the choices (prompt tokens counted once per distinct prompt). */
export function usageOf(choices: readonly FinishedChoice[], promptTokens: number): Usage {
  const completion = choices.reduce((sum, choice) => sum + choice.completionTokens, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
}

/** The whole (non-streamed) response object. */
export function responseObject(
  endpoint: Endpoint,
  header: ResponseHeader,
  choices: readonly FinishedChoice[],
  usage: Usage,
  policy: PolicyChoice,
) {
  const sorted = [...choices].sort((a, b) => a.index - b.index);
  return {
    id: header.id,
    object: endpoint === 'chat' ? 'chat.completion' : 'text_completion',
    created: header.created,
    model: header.model,
    choices: sorted.map((choice) =>
      endpoint === 'chat'
        ? {
            index: choice.index,
            message: { role: 'assistant', content: choice.text },
            logprobs: logprobsOf(endpoint, choice.logprobs),
            finish_reason: choice.finishReason,
          }
        : {
            index: choice.index,
            text: choice.text,
            logprobs: logprobsOf(endpoint, choice.logprobs),
            finish_reason: choice.finishReason,
          },
    ),
    usage,
    lethe: letheReport(policy, sorted),
  };
}

/** What a streamed chunk may carry besides its choice. */
export interface ChunkExtras {
  /** `null` on every chunk of a stream that asked for usage (`stream_options.include_usage`). */
  readonly usage?: null;
  /** The cache report, on the stream's last chunk that has a choice (see {@link answerJob}). */
  readonly lethe?: ReturnType<typeof letheReport>;
}

/**
 * One streamed chunk of choice `index`: a piece of text, or (with `finishReason`) its end. A chat
 * stream's first chunk of a choice carries `role: 'assistant'`.
 */
export function chunkObject(
  endpoint: Endpoint,
  header: ResponseHeader,
  index: number,
  piece: {
    text?: string;
    role?: boolean;
    finishReason?: FinishReason;
    /** The logprobs entries of this piece's tokens, when the request asked for them. */
    logprobs?: readonly LogprobEntry[];
  },
  extras: ChunkExtras = {},
) {
  const finish = piece.finishReason ?? null;
  const choice =
    endpoint === 'chat'
      ? {
          index,
          delta: {
            ...(piece.role ? { role: 'assistant' } : {}),
            ...(piece.text !== undefined ? { content: piece.text } : {}),
          },
          logprobs: logprobsOf(endpoint, piece.logprobs),
          finish_reason: finish,
        }
      : {
          index,
          text: piece.text ?? '',
          logprobs: logprobsOf(endpoint, piece.logprobs),
          finish_reason: finish,
        };
  return {
    id: header.id,
    object: endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: header.created,
    model: header.model,
    choices: [choice],
    ...extras,
  };
}

/**
 * The usage chunk a stream ends with when it asked for usage (`stream_options.include_usage`):
 * no choices — the only chunk without one, as the API sends it — `usage`, and the `lethe` report.
 */
export function usageChunk(
  endpoint: Endpoint,
  header: ResponseHeader,
  usage: Usage,
  lethe: ReturnType<typeof letheReport>,
) {
  return {
    id: header.id,
    object: endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: header.created,
    model: header.model,
    choices: [],
    usage,
    lethe,
  };
}
