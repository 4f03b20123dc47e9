import type { PreparedPolicy } from '@lethe/kv-cache';
import type { FastifyReply } from 'fastify';
import { toApiError } from './api-error';
import { type ChoiceOutcome, runChoice } from './choice-run';
import { EventStream } from './event-stream';
import {
  chunkObject,
  closingChunk,
  type Endpoint,
  type FinishedChoice,
  type ResponseHeader,
  responseObject,
  usageOf,
} from './openai-shapes';
import type { PolicyChoice, RequestPolicies } from './request-policy';
import type { ServedModel } from './served-model';

/** A checked request, ready to run: every choice of every prompt. */
export interface GenerationJob {
  readonly endpoint: Endpoint;
  readonly header: ResponseHeader;
  readonly served: ServedModel;
  /** Token ids of each prompt. */
  readonly prompts: readonly Int32Array[];
  /** Choices per prompt. */
  readonly n: number;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP: number;
  /** Seed of choice 0; choice `i` samples with `seed + i`. */
  readonly seed: number;
  readonly stop: readonly string[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly policy: {
    readonly choice: PolicyChoice;
    readonly prepared: PreparedPolicy;
    /** Frees what preparing it loaded for this request. */
    release(): void;
  };
}

/** The reason given to the sequences of a request whose client went away. */
class ClientGone extends Error {
  constructor() {
    super('the client closed the connection');
    this.name = 'ClientGone';
  }
}

/**
 * Runs every choice of `job` in the model's continuous batch — each its own sequence with its
 * own policies and cache — and answers: one JSON object, or (with `stream`) one event per piece
 * of text as it is produced, each choice's closing chunk, a closing chunk with `usage` (when
 * `stream_options.include_usage`) and the `lethe` cache report, then `[DONE]`. A client that
 * disconnects cancels every sequence of its request (they leave the batch at the next step and
 * free their caches). A failure before anything was streamed is thrown (answered as a JSON error
 * with its status, e.g. 429 when the batch is full); after, it ends the stream with an error
 * event.
 *
 * @returns the response object for a non-streamed job, undefined once a stream has ended.
 */
export async function answerJob(
  job: GenerationJob,
  reply: FastifyReply,
  policies: RequestPolicies,
): Promise<object | undefined> {
  const { served, endpoint, header } = job;
  const stream = job.stream ? new EventStream(reply) : undefined;
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new ClientGone());
  });
  const roleSent = new Set<number>();
  const send = (index: number, piece: Parameters<typeof chunkObject>[3]) => {
    if (stream === undefined || controller.signal.aborted) return;
    const role = endpoint === 'chat' && !roleSent.has(index);
    roleSent.add(index);
    stream.send(chunkObject(endpoint, header, index, { ...piece, role }));
  };
  // every choice's policies first: a refused budget or option starts no sequence
  const choices = job.prompts.flatMap((prompt, p) =>
    Array.from({ length: job.n }, (_, i) => ({
      index: p * job.n + i,
      prompt,
      policies: policies.build(
        job.policy.prepared,
        job.policy.choice,
        served.model,
        prompt.length,
        job.maxTokens,
      ),
    })),
  );
  const runs = choices.map(({ index, prompt, policies: built }) =>
    runChoice(
      served,
      {
        prompt,
        maxTokens: job.maxTokens,
        temperature: job.temperature,
        topP: job.topP,
        seed: job.seed + index,
        stop: job.stop,
        policies: built,
        signal: controller.signal,
      },
      (text) => send(index, { text }),
    ).then((outcome: ChoiceOutcome): FinishedChoice => {
      send(index, { finishReason: outcome.finishReason });
      return { index, ...outcome };
    }),
  );
  let finished: FinishedChoice[];
  try {
    finished = await Promise.all(runs);
  } catch (error) {
    controller.abort(error);
    await Promise.allSettled(runs);
    if (stream?.started) {
      if (!(error instanceof ClientGone)) stream.fail(toApiError(error).body());
      return undefined;
    }
    throw error;
  }
  const promptTokens = job.prompts.reduce((sum, prompt) => sum + prompt.length, 0);
  const usage = usageOf(finished, promptTokens);
  if (stream === undefined) {
    return responseObject(endpoint, header, finished, usage, job.policy.choice);
  }
  stream.send(
    closingChunk(endpoint, header, job.includeUsage ? usage : null, job.policy.choice, finished),
  );
  stream.done();
  return undefined;
}
