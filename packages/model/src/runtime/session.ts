import { assertInteger, LetheError } from '@lethe/core';
import {
  type ComputePolicy,
  type EvictionPolicy,
  type KVCacheOptions,
  type KVCacheStore,
  type ReadAnchors,
  type ReadSelector,
  resolveReadAnchors,
} from '@lethe/kv-cache';
import type { DecoderModel } from '../decoder/index';
import { checkReadSelector } from '../decoder/step-checks';
import { decodeStates, prefillStates, type StepRow } from './batch-steps';
import { type CacheReads, sequenceCacheOptions, sequenceCacheReads } from './cache-options';
import type { ComputeUsage } from './compute-usage';
import { defaultCache, releaseCache } from './default-cache';
import type { EvictionRound } from './eviction-rounds';
import type { DecodeReads } from './generation-stats';
import { incomingAfter, prefillChunkEnd, roomUnder } from './prefill-chunks';
import { type Prompt, promptIds } from './prompts';
import { SequenceState } from './sequence-state';
import { checkSessionOptions } from './session-checks';

/** Options of a {@link GenerationSession}. */
export interface SessionOptions {
  /** The model to run. */
  readonly model: DecoderModel;
  /**
   * Eviction policy applied after prefill and after every decode step (default: full cache). A
   * policy with a `gate` (GSA) also has the model run that gate on every token it writes: the
   * caches store gates and every query adds `log g` of each entry it reads.
   */
  readonly eviction?: EvictionPolicy;
  /**
   * Compute policy giving per-step controls (attention pages, token keep κ, MLP keep, bits). It
   * is asked before every decode step of every sequence with that sequence's own state
   * (`createState`, made once per sequence at prefill), the token the step feeds and, when its
   * `needs.embedding` is set, that token's input embedding, and when its `needs.logits` is set the
   * logits the sequence's previous step (or prefill) returned; the session records the realised
   * per-axis averages ({@link GenerationSession.computeUsage}).
   *
   * With `compute.refreshEvery = T` (SOL's periodic KV refresh, §4) the session also keeps, per
   * sequence, the tokens its decode steps fed since the last refresh; after the step that brings
   * them to `T` (its outputs downloaded and returned as usual, computed from the cache before the
   * refresh) it truncates the sequence's cache to `length − T` and prefills those `T` tokens again
   * densely — no controls, no read selector, the gate hook if the session has one — discarding the
   * logits. Tokens are never resampled; the refreshed final hidden state is what the compute
   * policy observes as `hidden` before the next step. Sequences reaching their boundary on the
   * same step are refreshed by one batched prefill. The per-sequence compute state and random
   * streams are left as they are (the policy sees the step count and can start its own episodes).
   * Caches are then made with `trace: false` (a `KVCache` with a visibility trace cannot truncate)
   * and each must accept `truncate` ({@link KVCacheStore.truncate}). Refresh passes count in
   * {@link GenerationSession.refreshes}, not in `computeUsage` or `decodeReads`. `refreshEvery`
   * cannot be combined with `eviction` or `readSelector` (see the constructor).
   */
  readonly compute?: ComputePolicy;
  /**
   * Entries a `tokenKeep` read of the compute policy never skips: the first `sinks` and last
   * `window` live entries per KV head (default `{ sinks: 4, window: 2 }`, SOL's; see
   * `DecodeStepOptions.readAnchors`).
   */
  readonly readAnchors?: Partial<ReadAnchors>;
  /**
   * Read-time page selector (e.g. `QuestSelector`) asked in every layer of every decode step,
   * per sequence, which pages the new token reads (intersected with the compute policy's
   * `readPages`). It evicts nothing; prefill reads densely. See `DecodeStepOptions.readSelector`.
   */
  readonly readSelector?: ReadSelector;
  /**
   * The eviction policy's ceiling (`PolicySet.ceiling`: most live entries per KV head, an integer
   * ≥ 2; only with `eviction`): every prefill chunk ends where it would take some sequence's
   * fullest head past it, so the budget bounds the peak during the prompt too, whatever
   * `prefillChunk` says. Without it a chunk may pass the policy's budget by its length − 1.
   */
  readonly ceiling?: number;
  /** Slots per KV-cache page (default: the read selector's `pageSize`, else 16). */
  readonly pageSize?: number;
  /**
   * Makes each sequence's cache, at prefill, from the options the session derives: the model's
   * geometry with `pageSize`, the eviction policy's anchors, and the query window and attention
   * tracking that the eviction policy and read selector need. Default: a `DeviceKVCache` on
   * tfjs's WebGPU backend (attention by the paged WGSL kernel), a `KVCache` elsewhere. The
   * session frees the caches it made (a device cache's GPU buffers) at the next `prefill` and at
   * {@link GenerationSession.dispose}. A runtime puts its own cache (device resident, another engine's) behind the session by
   * returning any `KVCacheStore` that honours these options; the model checks it structurally
   * and against its geometry before the first step (`E_ARG` / `E_STATE` naming `caches[b]`).
   * `reads` says whether the run reads keys on the host synchronously (a cache may keep them on
   * its device only otherwise: the default device cache does).
   */
  readonly createCache?: (options: KVCacheOptions, reads: CacheReads) => KVCacheStore;
  /** Seed of the eviction and compute policies' random streams (default 0). */
  readonly seed?: number;
  /**
   * Random-stream id of each sequence (default 0..B-1). A sequence run alone with stream id s
   * behaves exactly as the same sequence inside a batch with stream id s.
   */
  readonly streamIds?: readonly number[];
  /**
   * Prefill in chunks of at most this many tokens per sequence, with the eviction check after
   * every chunk, so a policy bounds the cache's peak during the prompt too (about its capacity
   * plus one chunk) instead of only after the whole prompt is in. Default: the whole prompt at
   * once. An eviction policy that declares its own `prefillChunk` (NAMM) adds chunk boundaries
   * at its multiples.
   */
  readonly prefillChunk?: number;
  /**
   * Called before every prefill chunk (once when the prompt goes in whole) with the sequences
   * it feeds, all caches as the chunk will find them, and the chunk's first prompt position.
   */
  readonly onPrefillChunk?: (event: PrefillChunkEvent) => void;
  /**
   * Called after every eviction round, once the cache has applied the decision — how a trainer
   * records a learned policy's actions per sequence (NGC's rollouts).
   */
  readonly onEvictionRound?: (event: EvictionRoundEvent) => void;
}

/** What {@link SessionOptions.onEvictionRound} sees after an eviction round. */
export interface EvictionRoundEvent extends EvictionRound {
  /** Index of the sequence whose cache ran the round. */
  readonly sequence: number;
}

/** What {@link SessionOptions.onPrefillChunk} sees before a prefill chunk. */
export interface PrefillChunkEvent {
  /** Indices of the sequences whose prompt the chunk continues. */
  readonly sequences: readonly number[];
  /** Every sequence's cache. */
  readonly caches: readonly KVCacheStore[];
  /** Prompt position of the chunk's first token. */
  readonly start: number;
  /** Tokens the chunk feeds to each of `sequences` (a prompt ends in the chunk where `start + length` reaches it). */
  readonly lengths: readonly number[];
}

/** Last-position outputs of a prefill or a decode step, one row per sequence. */
export interface StepOutput {
  /** Logits of the next token, `[vocab]` per sequence. */
  readonly logits: Float32Array[];
  /** Final hidden state of the last token, `[hidden]` per sequence. */
  readonly hidden: Float32Array[];
}

/**
 * Prefill + decode of a batch of sequences, each with its own KV cache and its own evictions.
 * The eviction policy is asked after prefill and after every step, per sequence and layer,
 * whether to run a round (`shouldEvict`), then what to keep (`select`), each time with the
 * sequence's own policy state (`createState`, made once per sequence at prefill). A read selector, when
 * given, restricts each decode step's reads without evicting. Steps may run on any subset of the
 * sequences (finished ones drop out).
 *
 * @example
 * ```ts
 * const session = new GenerationSession({ model, eviction: new H2O({ budget: { keepCount: 64 } }) });
 * const first = await session.prefill([prompt]);
 * const next = await session.step([0], new Int32Array([token]));
 * ```
 */
export class GenerationSession {
  /** One cache per sequence, created by {@link GenerationSession.prefill} (see `createCache`). */
  caches: KVCacheStore[] = [];
  private readonly model: DecoderModel;
  private readonly createCache: (options: KVCacheOptions, reads: CacheReads) => KVCacheStore;
  private readonly eviction: EvictionPolicy | undefined;
  private readonly compute: ComputePolicy | undefined;
  private readonly readSelector: ReadSelector | undefined;
  private readonly ceiling: number | undefined;
  private readonly readAnchors: ReadAnchors;
  private readonly pageSize: number;
  private readonly seed: number;
  private readonly streamIds: readonly number[] | undefined;
  private readonly prefillChunk: number | undefined;
  private readonly onPrefillChunk: ((event: PrefillChunkEvent) => void) | undefined;
  private readonly onEvictionRound: ((event: EvictionRoundEvent) => void) | undefined;
  /** Each sequence's policy state, reads and last outputs (see {@link SequenceState}). */
  private states: SequenceState[] = [];

  /**
   * @throws LetheError `E_ARG` naming `options` when it is not an object, `model`, `eviction` or
   *   `compute` when it does not implement its interface, `readSelector` (or its field) for a bad
   *   read selector, `readSelector.pageSize` when it differs from `pageSize`, `readAnchors.sinks`
   *   / `readAnchors.window` unless non-negative integers, `prefillChunk` when it is not a
   *   positive integer, `createCache`, `onPrefillChunk` or `onEvictionRound` when
   *   given and not a function, `streamIds` (`streamIds[b]`) when not an array of
   *   non-negative integers, or `compute.refreshEvery` when it is not a positive integer or is
   *   combined with an eviction policy or a read selector (the refresh re-prefills tokens an
   *   eviction round may have evicted and cannot rebuild what the policy or selector tracked).
   */
  constructor(options: SessionOptions) {
    checkSessionOptions(options);
    this.model = options.model;
    this.createCache = options.createCache ?? defaultCache;
    this.eviction = options.eviction;
    this.compute = options.compute;
    this.readSelector = options.readSelector;
    this.ceiling = options.ceiling;
    if (this.readSelector !== undefined) {
      checkReadSelector(this.readSelector);
      if (options.pageSize !== undefined && options.pageSize !== this.readSelector.pageSize) {
        throw new LetheError(
          'E_ARG',
          `is ${this.readSelector.pageSize} but the session's pageSize is ${options.pageSize}`,
          'readSelector.pageSize',
        );
      }
    }
    this.pageSize = options.pageSize ?? this.readSelector?.pageSize ?? 16;
    this.readAnchors = resolveReadAnchors(options.readAnchors);
    this.seed = options.seed ?? 0;
    this.streamIds = options.streamIds;
    if (options.prefillChunk !== undefined) assertInteger(options.prefillChunk, 'prefillChunk', 1);
    this.prefillChunk = options.prefillChunk;
    this.onPrefillChunk = options.onPrefillChunk;
    this.onEvictionRound = options.onEvictionRound;
  }

  /**
   * Frees the caches the session made (a `DeviceKVCache`'s GPU buffers; a host cache needs
   * nothing) and forgets them: `caches` is empty until the next `prefill`.
   */
  dispose(): void {
    for (const cache of this.caches) releaseCache(cache);
    this.caches = [];
    this.states = [];
  }

  /** Number of sequences. */
  get batchSize(): number {
    return this.caches.length;
  }

  /**
   * What each sequence's decode steps have read of its cache so far, summed over steps, layers
   * and KV heads (`entries / live`: the realised read fraction).
   */
  get decodeReads(): DecodeReads[] {
    return this.states.map((state) => state.decodeReads);
  }

  /**
   * The compute each sequence's decode steps asked of the model so far: the compute policy's
   * controls averaged over steps and layers (κ, ρ and q / 16; dense layers count as 1).
   */
  get computeUsage(): ComputeUsage[] {
    return this.states.map((state) => state.computeUsage);
  }

  /**
   * How many KV refreshes ({@link SessionOptions.compute}'s `refreshEvery`) each sequence has run
   * since its prefill: one per `refreshEvery` decode steps (all 0 without `refreshEvery`). A fresh
   * array.
   */
  get refreshes(): number[] {
    return this.states.map((state) => state.refreshes);
  }

  /**
   * Creates one cache per prompt and runs the batched prefill — whole, or in chunks ending at
   * the multiples of `prefillChunk` and of the eviction policy's `prefillChunk`, and where the
   * `ceiling` leaves no more room ({@link prefillChunkEnd}; sequences whose prompt has ended drop
   * out of later chunks) — with an eviction check after each, which under a ceiling leaves room
   * for the next chunk ({@link incomingAfter}). Returns the outputs at each prompt's last token. Every prompt is
   * checked before anything runs.
   *
   * @param batch token ids per sequence: `Int32Array`s or plain arrays of integers.
   * @throws LetheError `E_ARG` naming `prompts` or `prompts[b]` (see {@link promptIds}),
   *   `E_SHAPE` naming `streamIds` when it does not hold one id per prompt; with `refreshEvery`,
   *   `E_STATE` naming `truncate` when a cache from `createCache` cannot truncate (each new cache
   *   is asked to `truncate(0)` before anything runs).
   */
  async prefill(batch: readonly Prompt[]): Promise<StepOutput> {
    const prompts = promptIds(batch, this.model.config);
    const ids = this.streamIds ?? prompts.map((_, b) => b);
    if (ids.length !== prompts.length) {
      throw new LetheError(
        'E_SHAPE',
        `needs one id per prompt (${prompts.length}), got ${ids.length}`,
        'streamIds',
      );
    }
    const policies = {
      eviction: this.eviction,
      compute: this.compute,
      readSelector: this.readSelector,
    };
    const cacheOptions = sequenceCacheOptions(this.model, policies, this.pageSize);
    const reads = sequenceCacheReads(policies);
    const caches = prompts.map(() => this.createCache(cacheOptions, reads));
    // A cache that cannot truncate is refused now, not after the first episode's steps.
    if (this.compute?.refreshEvery !== undefined) for (const cache of caches) cache.truncate(0);
    for (const cache of this.caches) releaseCache(cache);
    this.caches = caches;
    const layers = this.model.config.num_hidden_layers;
    this.states = caches.map(
      (cache, b) => new SequenceState(cache, policies, this.seed, ids[b]!, layers),
    );
    const longest = Math.max(...prompts.map((p) => p.length));
    for (let start = 0, end = 0; start < longest; start = end) {
      const sequences = prompts.flatMap((p, b) => (p.length > start ? [b] : []));
      const room = Math.min(...sequences.map((b) => roomUnder(caches[b]!, this.ceiling)));
      end = prefillChunkEnd(start, longest, this.prefillChunk, this.eviction?.prefillChunk, room);
      const pieces = sequences.map((b) => prompts[b]!.subarray(start, end));
      const lengths = pieces.map((p) => p.length);
      this.onPrefillChunk?.({ sequences, caches: this.caches, start, lengths });
      const policyChunk = this.eviction?.prefillChunk;
      await prefillStates(
        this.model,
        sequences.map((b) => this.states[b]!),
        pieces,
        this.roundHooks(sequences),
        undefined,
        sequences.map((b) =>
          incomingAfter(end, prompts[b]!.length, this.prefillChunk, policyChunk, this.ceiling),
        ),
      );
    }
    return {
      logits: this.states.map((state) => state.lastLogits),
      hidden: this.states.map((state) => state.lastHidden),
    };
  }

  /**
   * Decodes one token for each sequence in `sequences` (indices into the batch), then runs the
   * eviction checks for those sequences, then, with the compute policy's `refreshEvery = T`, the
   * KV refresh of every stepped sequence whose `T`-th decode step since its last refresh this was
   * (one batched dense prefill of their last `T` tokens; see {@link SessionOptions.compute}). The
   * returned outputs are the step's own, computed before the refresh. A step that fails changes
   * no cache (see `DecoderModel.decodeStep`); a refresh that fails (the model computing non-finite entries)
   * leaves the refreshed sequences' caches truncated by `T` tokens and rethrows.
   *
   * @throws LetheError `E_ARG` naming `sequences` or `tokens` when they are not an array of
   *   indices in the batch and an `Int32Array`, `E_SHAPE` naming `tokens` when their lengths
   *   differ; the decode step's own errors.
   */
  async step(sequences: readonly number[], tokens: Int32Array): Promise<StepOutput> {
    if (!Array.isArray(sequences)) {
      throw new LetheError('E_ARG', 'must be an array of sequence indices', 'sequences');
    }
    if (!(tokens instanceof Int32Array)) {
      throw new LetheError('E_ARG', 'must be an Int32Array', 'tokens');
    }
    if (tokens.length !== sequences.length) {
      throw new LetheError(
        'E_SHAPE',
        `needs one token per sequence (${sequences.length}), got ${tokens.length}`,
        'tokens',
      );
    }
    for (const b of sequences) {
      if (!(Number.isInteger(b) && b >= 0 && b < this.caches.length)) {
        throw new LetheError(
          'E_ARG',
          `no sequence ${b} in a batch of ${this.caches.length}`,
          'sequences',
        );
      }
    }
    const rows = await decodeStates(
      this.model,
      sequences.map((b) => this.states[b]!),
      tokens,
      this.readAnchors,
      this.roundHooks(sequences),
    );
    const done = rows as StepRow[];
    return { logits: done.map((row) => row.logits), hidden: done.map((row) => row.hidden) };
  }

  /** The eviction-round hook of a step over `sequences` (indices into the batch). */
  private roundHooks(sequences: readonly number[]) {
    const listener = this.onEvictionRound;
    if (listener === undefined) return {};
    return {
      onRound: (index: number, round: EvictionRound) =>
        listener({ sequence: sequences[index]!, ...round }),
    };
  }
}
