import { assertInteger, LetheError } from '@lethe/core';
import {
  type KVCacheOptions,
  type KVCacheStore,
  type ReadAnchors,
  resolveReadAnchors,
} from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/index';
import { checkMethods, checkObject, checkOptionalFunction } from '../option-checks';
import {
  type BatchFinishReason,
  type BatchHandlers,
  type BatchRequest,
  type BatchResult,
  checkBatchRequest,
} from './batch-request';
import { decodeStates, prefillStates } from './batch-steps';
import { BatchedSequence } from './batched-sequence';
import { type CacheReads, sequenceCacheOptions, sequenceCacheReads } from './cache-options';
import { CapacityError } from './capacity-error';
import { defaultCache, releaseCache } from './default-cache';
import { nextMacrotask } from './event-loop';
import { sumOf } from './eviction-rounds';
import { incomingAfter, prefillChunkEnd, roomUnder } from './prefill-chunks';
import { SequenceState } from './sequence-state';

/** Options of a {@link ContinuousBatcher}. */
export interface BatcherOptions {
  /** The model every request runs on. */
  readonly model: DecoderModel;
  /** Requests in the running batch at most (default 8). */
  readonly maxSequences?: number;
  /**
   * Requests waiting for a slot at most (default 64). A request beyond `maxSequences +
   * maxQueue` is refused at once with a {@link CapacityError}.
   */
  readonly maxQueue?: number;
  /**
   * Prompt tokens a request feeds per step at most (default 256): a long prompt goes in over
   * several steps, between which the running requests keep decoding, and its eviction policy runs
   * after each chunk (as `generate()`'s `prefillChunk`; an eviction policy's own `prefillChunk`
   * adds boundaries at its multiples, and a request's `policies.ceiling` ends a chunk where it
   * would take a KV head past the ceiling, so a budget bounds the peak during the prompt too).
   */
  readonly prefillChunk?: number;
  /** Slots per cache page of a request without a read selector (default 16; with one, its `pageSize`). */
  readonly pageSize?: number;
  /**
   * Entries a compute policy's `tokenKeep` read never skips (default `{ sinks: 4, window: 2 }`;
   * see `DecodeStepOptions.readAnchors`). One setting for every request.
   */
  readonly readAnchors?: Partial<ReadAnchors>;
  /**
   * Makes each request's cache (default: a `DeviceKVCache` on WebGPU, a `KVCache` elsewhere; see
   * `SessionOptions.createCache`); a finished request's cache is freed.
   */
  readonly createCache?: (options: KVCacheOptions, reads: CacheReads) => KVCacheStore;
  /** Clock in ms for the step times behind a capacity error's retry-after (default `performance.now`). */
  readonly now?: () => number;
}

/** What a {@link ContinuousBatcher} holds and has done, for a server's metrics. */
export interface BatcherStats {
  /** Requests waiting for a slot. */
  readonly queued: number;
  /** Requests in the running batch (prefilling or decoding). */
  readonly active: number;
  /** Tokens generated so far, over every request. */
  readonly generatedTokens: number;
  /** Prompt tokens prefilled so far, over every request. */
  readonly promptTokens: number;
  /** KV entries the running requests' caches hold now, summed over layers and KV heads. */
  readonly kvEntries: number;
  /** Entries eviction rounds removed so far, over every request. */
  readonly evictedEntries: number;
  /** Eviction rounds run so far (per layer), over every request. */
  readonly evictionRounds: number;
}

const DEFAULTS = { maxSequences: 8, maxQueue: 64, prefillChunk: 256, pageSize: 16 } as const;

/**
 * Continuous batching: the engine under a server. Requests join and leave one running decode
 * batch step by step, each with its own policies (eviction, compute with KV refresh, read
 * selector, GSA gate), cache, sampling stream and stop conditions, instead of waiting for whole
 * generations to finish.
 *
 * Every step (one turn of the loop, after yielding to the event loop so that I/O runs and new
 * requests join between steps): waiting requests are admitted up to `maxSequences` (a cache
 * each); every request still prefilling feeds its next prompt chunk of at most `prefillChunk`
 * tokens, all in one batched prefill, and one whose prompt is in samples its first token; then
 * ONE batched `decodeStep` runs every decoding request, each with its own cache, controls, read
 * selector and gate, followed per request by its eviction rounds, compute bookkeeping and KV
 * refresh exactly as in `GenerationSession` (the same `SequenceState` code), then sampling and
 * stop checks; finished requests leave and their caches are freed.
 *
 * A request's output does not depend on the others: on wasm every cached step computes each
 * sequence bit for bit as in a batch of its own (`DecoderModel.decodeStep`), and each request has
 * its own random streams (see {@link BatchRequest.seed}), so it generates exactly what
 * `generate({ prompts: [prompt], seed, maxNewTokens, sampling, stop, …policies, prefillChunk,
 * pageSize, readAnchors })` generates, whenever it arrives and whoever shares its steps.
 *
 * A failure is its request's own: a policy, cache or handler that throws fails that request
 * (its promise rejects); a batched model call that throws is retried per request, alone, so only
 * the request that fails alone is rejected. Browser-safe (no Node import).
 *
 * @example
 * ```ts
 * const batcher = new ContinuousBatcher({ model, maxSequences: 8, maxQueue: 32 });
 * const result = await batcher.submit(
 *   { prompt, maxNewTokens: 64, sampling: { temperature: 0.8, topP: 0.95 }, seed: 7,
 *     stop: { eosTokenIds: [2] }, policies: { eviction: new H2OPolicy({ budget: { keepCount: 64 } }) } },
 *   { onToken: ({ token }) => { stream.write(tokenizer.decode([token])); return true; } },
 * );
 * await batcher.close();
 * ```
 */
export class ContinuousBatcher {
  private readonly model: DecoderModel;
  private readonly maxSequences: number;
  private readonly maxQueue: number;
  private readonly prefillChunk: number;
  private readonly pageSize: number;
  private readonly readAnchors: ReadAnchors;
  private readonly createCache: (options: KVCacheOptions, reads: CacheReads) => KVCacheStore;
  private readonly now: () => number;
  private queue: BatchedSequence[] = [];
  private active: BatchedSequence[] = [];
  private readonly detach = new Map<BatchedSequence, () => void>();
  private running = false;
  private closed = false;
  private drained: (() => void)[] = [];
  /** Mean wall time of a step, seconds (exponential average; 0 before the first). */
  private stepSeconds = 0;
  private generatedTokens = 0;
  private promptTokens = 0;
  /** Evictions of the requests that left. */
  private evictedBefore = 0;
  private roundsBefore = 0;

  /**
   * @throws LetheError `E_ARG` naming `options` when it is not an object, `model` when it is not
   *   a `DecoderModel`, `maxSequences` / `prefillChunk` / `pageSize` unless positive integers,
   *   `maxQueue` unless a non-negative integer, `readAnchors.sinks` / `readAnchors.window` unless
   *   non-negative integers, `createCache` / `now` when given and not functions.
   */
  constructor(options: BatcherOptions) {
    checkObject(options, 'options');
    checkMethods(options.model, ['prefill', 'decodeStep'], 'model', 'a DecoderModel');
    checkObject(options.model.config, 'model.config');
    checkOptionalFunction(options.createCache, 'createCache');
    checkOptionalFunction(options.now, 'now');
    this.model = options.model;
    this.maxSequences = options.maxSequences ?? DEFAULTS.maxSequences;
    assertInteger(this.maxSequences, 'maxSequences', 1);
    this.maxQueue = options.maxQueue ?? DEFAULTS.maxQueue;
    assertInteger(this.maxQueue, 'maxQueue', 0);
    this.prefillChunk = options.prefillChunk ?? DEFAULTS.prefillChunk;
    assertInteger(this.prefillChunk, 'prefillChunk', 1);
    this.pageSize = options.pageSize ?? DEFAULTS.pageSize;
    assertInteger(this.pageSize, 'pageSize', 1);
    this.readAnchors = resolveReadAnchors(options.readAnchors);
    this.createCache = options.createCache ?? defaultCache;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Queues a request; it joins the running batch at the next step with a free slot. The promise
   * resolves when it finishes — `eos`, `stop-sequence`, `length`, `callback` (its `onToken`
   * returned `false`) or `cancelled` (its signal aborted, or `close({ cancel: true })`) — with
   * its tokens, log-probabilities, prompt length and cache report. It rejects with the error of a
   * policy, cache or handler that failed it.
   *
   * @throws (as a rejected promise, before anything is queued) LetheError `E_STATE` naming
   *   `submit` after {@link close}; the request's errors (see `checkBatchRequest`: `prompt`,
   *   `maxNewTokens` — also when prompt plus output would run past the model's context —,
   *   `sampling.*`, `seed`, `stop.*`, `policies.*`, `signal`, `handlers.onToken`); a
   *   {@link CapacityError} (`E_CAPACITY`, with `retryAfterSeconds`) when `maxSequences`
   *   requests run and `maxQueue` wait.
   */
  submit(request: BatchRequest, handlers: BatchHandlers = {}): Promise<BatchResult> {
    try {
      if (this.closed) throw new LetheError('E_STATE', 'the batcher is closed', 'submit');
      const checked = checkBatchRequest(request, handlers, this.model.config);
      if (this.queue.length + this.active.length >= this.maxSequences + this.maxQueue) {
        throw new CapacityError(
          `${this.active.length} requests run (maxSequences ${this.maxSequences}) and ${this.queue.length} wait (maxQueue ${this.maxQueue})`,
          this.retryAfterSeconds(),
        );
      }
      return new Promise<BatchResult>((resolve, reject) => {
        const sequence = new BatchedSequence(checked, this.model.config, resolve, reject);
        const signal = checked.signal;
        if (signal?.aborted) {
          sequence.settle('cancelled');
          return;
        }
        if (signal !== undefined) {
          const onAbort = () => this.cancel(sequence);
          signal.addEventListener('abort', onAbort, { once: true });
          this.detach.set(sequence, () => signal.removeEventListener('abort', onAbort));
        }
        this.queue.push(sequence);
        this.kick();
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Queue depth, running requests, tokens so far, KV entries held, evictions so far. */
  stats(): BatcherStats {
    let kvEntries = 0;
    let evictedEntries = this.evictedBefore;
    let evictionRounds = this.roundsBefore;
    for (const sequence of this.active) {
      const state = sequence.state;
      if (state === undefined) continue;
      const layers = state.cache.geometry.layers;
      for (let l = 0; l < layers; l++) kvEntries += sumOf(state.cache.liveCounts(l));
      evictedEntries += state.eviction?.evictedEntries ?? 0;
      evictionRounds += sumOf(state.cache.stats().evictionRounds);
    }
    return {
      queued: this.queue.length,
      active: this.active.length,
      generatedTokens: this.generatedTokens,
      promptTokens: this.promptTokens,
      kvEntries,
      evictedEntries,
      evictionRounds,
    };
  }

  /**
   * Stops admitting requests (a later {@link submit} rejects with `E_STATE`) and resolves once
   * every accepted request has finished: the running ones and those waiting (drain). With
   * `cancel: true`, every accepted request is cancelled instead (finish reason `cancelled`, its
   * tokens so far) and the promise resolves once the step in progress, if any, has ended.
   *
   * @throws LetheError `E_ARG` naming `options` when it is not an object.
   */
  close(options: { readonly cancel?: boolean } = {}): Promise<void> {
    checkObject(options, 'options');
    this.closed = true;
    if (options.cancel === true) {
      for (const sequence of [...this.queue, ...this.active]) this.cancel(sequence);
    }
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained.push(resolve);
    });
  }

  /** Starts the loop unless it runs. */
  private kick(): void {
    if (this.running) return;
    this.running = true;
    void this.loop();
  }

  /** Steps while requests wait or run, yielding to the event loop before every step. */
  private async loop(): Promise<void> {
    try {
      while (this.queue.length > 0 || this.active.length > 0) {
        await nextMacrotask();
        const start = this.now();
        try {
          await this.step();
        } catch (error) {
          // Not one request's failure (those are handled inside the step): fail the batch.
          for (const sequence of [...this.active]) this.release(sequence, { error });
        }
        const seconds = (this.now() - start) / 1000;
        this.stepSeconds =
          this.stepSeconds === 0 ? seconds : 0.9 * this.stepSeconds + 0.1 * seconds;
      }
    } finally {
      this.running = false;
      for (const resolve of this.drained.splice(0)) resolve();
    }
  }

  /** One step: admit, prefill chunks, one decode step, retire the finished. */
  private async step(): Promise<void> {
    this.admit();
    const prefilling = this.active.filter((sequence) => sequence.prefilling);
    if (prefilling.length > 0) await this.prefill(prefilling);
    const decoding = this.active.filter(
      (sequence) => !sequence.done && sequence.pending !== undefined,
    );
    if (decoding.length > 0) await this.decode(decoding);
    for (const sequence of [...this.active]) {
      if (sequence.done) this.release(sequence, { reason: sequence.finish! });
    }
  }

  /** Moves waiting requests into the batch while slots are free, each with a new cache. */
  private admit(): void {
    const layers = this.model.config.num_hidden_layers;
    while (this.active.length < this.maxSequences && this.queue.length > 0) {
      const sequence = this.queue.shift()!;
      const { policies, seed } = sequence.request;
      try {
        const pageSize = policies.readSelector?.pageSize ?? this.pageSize;
        const cache = this.createCache(
          sequenceCacheOptions(this.model, policies, pageSize),
          sequenceCacheReads(policies),
        );
        // A cache that cannot truncate fails its request now, not at its first refresh.
        if (policies.compute?.refreshEvery !== undefined) cache.truncate(0);
        sequence.state = new SequenceState(cache, policies, seed, 0, layers);
        this.active.push(sequence);
      } catch (error) {
        this.release(sequence, { error });
      }
    }
  }

  /** Feeds every prefilling request its next prompt chunk (one batched prefill). */
  private async prefill(sequences: readonly BatchedSequence[]): Promise<void> {
    const incoming: number[] = [];
    const pieces = sequences.map((sequence) => {
      const { request, fed } = sequence;
      const { ceiling, eviction } = request.policies;
      const length = request.prompt.length;
      const end = prefillChunkEnd(
        fed,
        length,
        this.prefillChunk,
        eviction?.prefillChunk,
        roomUnder(sequence.state!.cache, ceiling),
      );
      incoming.push(incomingAfter(end, length, this.prefillChunk, eviction?.prefillChunk, ceiling));
      return request.prompt.subarray(fed, end);
    });
    const rows = await prefillStates(
      this.model,
      sequences.map((sequence) => sequence.state!),
      pieces,
      { onError: (i, error) => this.release(sequences[i]!, { error }) },
      sequences.map((sequence) => sequence.request.onPromptToken !== undefined),
      incoming,
    );
    const vocab = this.model.config.vocab_size;
    rows.forEach((row, i) => {
      const sequence = sequences[i]!;
      if (row === undefined || sequence.done) return;
      if (row.positionLogits !== undefined) {
        try {
          sequence.scorePrompt(sequence.fed, row.positionLogits, vocab);
        } catch (error) {
          this.release(sequence, { error });
          return;
        }
      }
      sequence.fed += pieces[i]!.length;
      this.promptTokens += pieces[i]!.length;
      if (!sequence.prefilling) this.take(sequence, row.logits);
    });
  }

  /** One batched decode step over `sequences`, then each samples its next token. */
  private async decode(sequences: readonly BatchedSequence[]): Promise<void> {
    const rows = await decodeStates(
      this.model,
      sequences.map((sequence) => sequence.state!),
      Int32Array.from(sequences, (sequence) => sequence.pending!),
      this.readAnchors,
      { onError: (i, error) => this.release(sequences[i]!, { error }) },
    );
    rows.forEach((row, i) => {
      const sequence = sequences[i]!;
      if (row !== undefined && !sequence.done) this.take(sequence, row.logits);
    });
  }

  /** Samples and streams `sequence`'s next token; a sampler or handler error fails it. */
  private take(sequence: BatchedSequence, logits: Float32Array): void {
    const before = sequence.generated;
    try {
      sequence.take(logits);
    } catch (error) {
      this.release(sequence, { error });
    } finally {
      this.generatedTokens += sequence.generated - before;
    }
  }

  /** Cancels `sequence` wherever it is: out of the queue or the batch, settled as `cancelled`. */
  private cancel(sequence: BatchedSequence): void {
    this.queue = this.queue.filter((queued) => queued !== sequence);
    this.release(sequence, { reason: 'cancelled' });
  }

  /**
   * Takes `sequence` out of the batch, counts its evictions, settles its promise (with `reason`,
   * or rejected with `error`) and frees its cache.
   */
  private release(
    sequence: BatchedSequence,
    outcome: { readonly reason: BatchFinishReason } | { readonly error: unknown },
  ): void {
    const state = sequence.state;
    if (state !== undefined) {
      this.evictedBefore += state.eviction?.evictedEntries ?? 0;
      this.roundsBefore += sumOf(state.cache.stats().evictionRounds);
      releaseCache(state.cache);
    }
    this.active = this.active.filter((running) => running !== sequence);
    this.detach.get(sequence)?.();
    this.detach.delete(sequence);
    if ('error' in outcome) sequence.fail(outcome.error);
    else sequence.settle(outcome.reason);
  }

  /**
   * Seconds until a slot is likely to free up: the mean step time × the fewest steps a running
   * request still needs (its prompt chunks and tokens left) × the rounds of slots the waiting
   * requests take first; at least 1.
   */
  private retryAfterSeconds(): number {
    const left = this.active.map(({ request, fed, generated }) => {
      const chunks = Math.ceil((request.prompt.length - fed) / this.prefillChunk);
      return chunks + request.maxNewTokens - generated;
    });
    const rounds = Math.ceil((this.queue.length + 1) / this.maxSequences);
    const seconds = this.stepSeconds * Math.min(...left, Number.POSITIVE_INFINITY) * rounds;
    return Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : 1;
  }
}
