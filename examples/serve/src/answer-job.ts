import type { SamplingOptions } from '@lethe/model';
import type { FastifyReply } from 'fastify';
import { toApiError } from './api-error';
import { type ChoiceOutcome, runChoice } from './choice-run';
import { EventStream } from './event-stream';
import {
  type ChunkExtras,
  chunkObject,
  type Endpoint,
  type FinishedChoice,
  letheReport,
  type ResponseHeader,
  responseObject,
  usageChunk,
  usageOf,
} from './openai-shapes';
import type { RequestPolicy } from './request-policy';
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
  readonly sampling: SamplingOptions;
  /** Seed of choice 0; choice `i` samples with `seed + i`. */
  readonly seed: number;
  readonly stop: readonly string[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** Alternatives per logprobs position, or undefined for no logprobs. */
  readonly logprobs: number | undefined;
  /** Each prompt's text to send before its choices' text (a completion's `echo`), or undefined. */
  readonly echo: readonly string[] | undefined;
  /** Its policy (or composition), prepared; released when the request is done. */
  readonly policy: RequestPolicy;
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
 * of text as it is produced, each choice's closing chunk, then `[DONE]`. Every chunk has a
 * choice, as OpenAI clients expect (`chunk.choices[0].delta`), except the usage chunk a request
 * asks for with `stream_options.include_usage` (no choices, `usage`, and `usage: null` on every
 * chunk before it). The `lethe` cache report rides on the usage chunk when there is one, else on
 * the closing chunk of the last choice to finish. A client that
 * disconnects cancels every sequence of its request (they leave the batch at the next step and
 * free their caches). A failure before anything was streamed is thrown (answered as a JSON error
 * with its status, e.g. 429 when the batch is full); after, it ends the stream with an error
 * event.
 *
 * @param draining whether the server is draining (a stream it starts then says `connection: close`).
 * @returns the response object for a non-streamed job, undefined once a stream has ended.
 */
export async function answerJob(
  job: GenerationJob,
  reply: FastifyReply,
  draining: () => boolean,
): Promise<object | undefined> {
  const { served, endpoint, header } = job;
  const stream = job.stream ? new EventStream(reply, draining) : undefined;
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new ClientGone());
  });
  const roleSent = new Set<number>();
  const usageField: ChunkExtras = job.includeUsage ? { usage: null } : {};
  const send = (
    index: number,
    piece: Parameters<typeof chunkObject>[3],
    extras: ChunkExtras = usageField,
  ) => {
    if (stream === undefined || controller.signal.aborted) return;
    const role = endpoint === 'chat' && !roleSent.has(index);
    roleSent.add(index);
    stream.send(chunkObject(endpoint, header, index, { ...piece, role }, extras));
  };
  // every choice's policies first: a refused budget or option starts no sequence
  const choices = job.prompts.flatMap((prompt, p) =>
    Array.from({ length: job.n }, (_, i) => ({
      index: p * job.n + i,
      prompt,
      promptIndex: p,
      policies: job.policy.build(served.model, prompt.length, job.maxTokens),
    })),
  );
  const finishedSoFar: FinishedChoice[] = [];
  const runs = choices.map(({ index, prompt, promptIndex, policies: built }) =>
    runChoice(
      served,
      {
        prompt,
        maxTokens: job.maxTokens,
        sampling: job.sampling,
        seed: job.seed + index,
        stop: job.stop,
        policies: built,
        signal: controller.signal,
        ...(job.logprobs === undefined ? {} : { logprobs: job.logprobs }),
        ...(job.echo === undefined ? {} : { echo: job.echo[promptIndex]! }),
      },
      (text, logprobs) =>
        send(index, { text, ...(job.logprobs === undefined ? {} : { logprobs }) }),
    ).then((outcome: ChoiceOutcome): FinishedChoice => {
      const done = { index, ...outcome };
      finishedSoFar.push(done);
      // the last choice to finish carries the report, unless a usage chunk will
      const last = finishedSoFar.length === choices.length && !job.includeUsage;
      send(
        index,
        { finishReason: outcome.finishReason },
        last ? { lethe: letheReport(job.policy.choice, finishedSoFar) } : usageField,
      );
      return done;
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
  if (job.includeUsage)
    stream.send(usageChunk(endpoint, header, usage, letheReport(job.policy.choice, finished)));
  stream.done();
  return undefined;
}
