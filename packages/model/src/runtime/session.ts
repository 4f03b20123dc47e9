import {
  type AttentionGate,
  type ComputePolicy,
  type EvictionPolicy,
  type KeepDecision,
  KVCache,
  type KVCacheOptions,
  type KVCacheStore,
  type LayerControls,
  type LayerObservation,
  type ObservationNeeds,
  type ReadAnchors,
  type ReadSelector,
  resolveReadAnchors,
} from '@lethe/kv-cache';
import { assertInteger, LetheError, Rng, type tf } from '@lethe/tensor';
import type { DecoderModel, KeyBiasHook, StepReads } from '../decoder/index';
import { checkReadSelector } from '../decoder/step-checks';
import { type ComputeUsage, ComputeUsageAccumulator } from './compute-usage';
import type { DecodeReads } from './generation-stats';
import { prefillChunkEnd } from './prefill-chunks';
import { type Prompt, promptIds } from './prompts';
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
  /** Slots per KV-cache page (default: the read selector's `pageSize`, else 16). */
  readonly pageSize?: number;
  /**
   * Makes each sequence's cache, at prefill, from the options the session derives: the model's
   * geometry with `pageSize`, the eviction policy's anchors, and the query window and attention
   * tracking that the eviction policy and read selector need. Default: `new KVCache(options)`.
   * A runtime puts its own cache (device resident, another engine's) behind the session by
   * returning any `KVCacheStore` that honours these options; the model checks it structurally
   * and against its geometry before the first step (`E_ARG` / `E_STATE` naming `caches[b]`).
   */
  readonly createCache?: (options: KVCacheOptions) => KVCacheStore;
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
export interface EvictionRoundEvent {
  /** Index of the sequence whose cache ran the round. */
  readonly sequence: number;
  /** Layer index. */
  readonly layer: number;
  /** Tokens in the layer when the round ran (the cache's `length(layer)`). */
  readonly step: number;
  /** What the policy observed; its arrays are only valid during the call (copy what you keep). */
  readonly observation: LayerObservation;
  /** What the policy returned and the cache applied. */
  readonly decision: KeepDecision;
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
 * const session = new GenerationSession({ model, eviction: new H2O({ budget: { capacity: 64 } }) });
 * const first = await session.prefill([prompt]);
 * const next = await session.step([0], new Int32Array([token]));
 * ```
 */
export class GenerationSession {
  /** One cache per sequence, created by {@link GenerationSession.prefill} (see `createCache`). */
  caches: KVCacheStore[] = [];
  private readonly model: DecoderModel;
  private readonly createCache: (options: KVCacheOptions) => KVCacheStore;
  private readonly eviction: EvictionPolicy | undefined;
  private readonly compute: ComputePolicy | undefined;
  private readonly readSelector: ReadSelector | undefined;
  private readonly readAnchors: ReadAnchors;
  /** The eviction policy's gate as the model's key-bias hook, or undefined. */
  private readonly keyBias: KeyBiasHook | undefined;
  private readonly pageSize: number;
  private readonly seed: number;
  private readonly streamIds: readonly number[] | undefined;
  private readonly prefillChunk: number | undefined;
  private readonly onPrefillChunk: ((event: PrefillChunkEvent) => void) | undefined;
  private readonly onEvictionRound: ((event: EvictionRoundEvent) => void) | undefined;
  private evictionRngs: Rng[] = [];
  /** Each sequence's own eviction-policy state (`EvictionPolicy.createState`), or undefined. */
  private evictionStates: unknown[] = [];
  private computeRngs: Rng[] = [];
  /** Each sequence's own compute-policy state (`ComputePolicy.createState`), or undefined. */
  private computeStates: unknown[] = [];
  private computeUsages: ComputeUsageAccumulator[] = [];
  private sinceRound: Int32Array[] = [];
  private lastHidden: Float32Array[] = [];
  /** Next-token logits of each sequence's last prefill or step (what a compute policy may observe). */
  private lastLogits: Float32Array[] = [];
  private readEntries: number[] = [];
  private readLive: number[] = [];
  /** `compute.refreshEvery` (`T`), or undefined: no refresh. */
  private readonly refreshEvery: number | undefined;
  /** Per sequence, the tokens its decode steps fed since its last refresh (at most `T − 1` between steps). */
  private sinceRefresh: number[][] = [];
  /** Per sequence, the refreshes run so far. */
  private refreshCounts: number[] = [];

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
    this.createCache = options.createCache ?? ((cacheOptions) => new KVCache(cacheOptions));
    this.eviction = options.eviction;
    const gate = options.eviction?.gate as AttentionGate<tf.Tensor> | undefined;
    this.keyBias = gate === undefined ? undefined : (layer, input) => gate.logGates(layer, input);
    this.compute = options.compute;
    this.readSelector = options.readSelector;
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
    this.refreshEvery = options.compute?.refreshEvery;
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
    return this.readEntries.map((entries, b) => ({ entries, live: this.readLive[b]! }));
  }

  /**
   * The compute each sequence's decode steps asked of the model so far: the compute policy's
   * controls averaged over steps and layers (κ, ρ and q / 16; dense layers count as 1).
   */
  get computeUsage(): ComputeUsage[] {
    return this.computeUsages.map((usage) => usage.usage());
  }

  /**
   * How many KV refreshes ({@link SessionOptions.compute}'s `refreshEvery`) each sequence has run
   * since its prefill: one per `refreshEvery` decode steps (all 0 without `refreshEvery`). A fresh
   * array.
   */
  get refreshes(): number[] {
    return [...this.refreshCounts];
  }

  /**
   * Creates one cache per prompt and runs the batched prefill — whole, or in chunks ending at
   * the multiples of `prefillChunk` and of the eviction policy's `prefillChunk`
   * ({@link prefillChunkEnd}; sequences whose prompt has ended drop out of later chunks) — with an
   * eviction check after each. Returns the outputs at each prompt's last token. Every prompt is
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
    const config = this.model.config;
    const needs = this.eviction?.needs;
    const readNeeds = this.readSelector?.needs;
    const cacheOptions: KVCacheOptions = {
      geometry: {
        layers: config.num_hidden_layers,
        kvHeads: config.num_key_value_heads,
        headDim: this.model.headDim,
        pageSize: this.pageSize,
      },
      queryHeads: config.num_attention_heads,
      anchors: this.eviction?.anchors,
      queryWindow: Math.max(needs?.attentionWindow ?? 0, readNeeds?.attentionWindow ?? 0),
      trackAttention:
        (needs?.accumulatedAttention ?? false) || (readNeeds?.accumulatedAttention ?? false),
      storeGates: this.keyBias !== undefined,
      // A refresh truncates the cache, which a visibility trace cannot follow.
      ...(this.refreshEvery === undefined ? {} : { trace: false }),
    };
    const caches = prompts.map(() => this.createCache(cacheOptions));
    // A cache that cannot truncate is refused now, not after the first episode's steps.
    if (this.refreshEvery !== undefined) for (const cache of caches) cache.truncate(0);
    this.caches = caches;
    const root = new Rng(this.seed);
    this.evictionRngs = ids.map((id) => root.fork(`evict-${id}`));
    this.evictionStates = prompts.map(() => this.eviction?.createState?.());
    this.computeRngs = ids.map((id) => root.fork(`compute-${id}`));
    this.computeStates = prompts.map(() => this.compute?.createState?.());
    this.computeUsages = prompts.map(() => new ComputeUsageAccumulator());
    this.sinceRound = prompts.map(() => new Int32Array(config.num_hidden_layers));
    this.readEntries = prompts.map(() => 0);
    this.readLive = prompts.map(() => 0);
    this.sinceRefresh = prompts.map(() => []);
    this.refreshCounts = prompts.map(() => 0);
    const longest = Math.max(...prompts.map((p) => p.length));
    const logits: Float32Array[] = [];
    const hidden: Float32Array[] = [];
    for (let start = 0, end = 0; start < longest; start = end) {
      end = prefillChunkEnd(start, longest, this.prefillChunk, this.eviction?.prefillChunk);
      const sequences = prompts.flatMap((p, b) => (p.length > start ? [b] : []));
      const pieces = sequences.map((b) => prompts[b]!.subarray(start, end));
      const lengths = pieces.map((p) => p.length);
      this.onPrefillChunk?.({ sequences, caches: this.caches, start, lengths });
      const out = this.model.prefill(
        sequences.map((b) => this.caches[b]!),
        pieces,
        this.keyBias === undefined ? {} : { keyBias: this.keyBias },
      );
      const result = await this.download(out, lengths, sequences);
      sequences.forEach((b, i) => {
        logits[b] = result.logits[i]!;
        hidden[b] = result.hidden[i]!;
      });
    }
    this.lastHidden = [...hidden];
    this.lastLogits = [...logits];
    return { logits, hidden };
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
    const caches = sequences.map((b) => this.caches[b]!);
    const controls = this.compute ? this.controlsFor(sequences, tokens) : undefined;
    const out = this.model.decodeStep(caches, tokens, controls, {
      ...(this.readSelector === undefined ? {} : { readSelector: this.readSelector }),
      ...(this.keyBias === undefined ? {} : { keyBias: this.keyBias }),
      readAnchors: this.readAnchors,
    });
    this.countReads(sequences, out.reads);
    const result = await this.download(
      out,
      sequences.map(() => 1),
      sequences,
    );
    sequences.forEach((b, i) => {
      this.lastHidden[b] = result.hidden[i]!;
      this.lastLogits[b] = result.logits[i]!;
      if (controls !== undefined) this.computeUsages[b]!.add(controls[i]!);
    });
    if (this.refreshEvery !== undefined) await this.refreshDue(sequences, tokens);
    return result;
  }

  /**
   * SOL's KV refresh: records the tokens this step fed and, for every sequence whose count
   * reaches `refreshEvery`, truncates its cache by those tokens and prefills them again densely
   * (one batched prefill for all such sequences), keeping only the refreshed final hidden state.
   */
  private async refreshDue(sequences: readonly number[], tokens: Int32Array): Promise<void> {
    const every = this.refreshEvery!;
    const due: number[] = [];
    sequences.forEach((b, i) => {
      const fed = this.sinceRefresh[b]!;
      fed.push(tokens[i]!);
      if (fed.length === every) due.push(b);
    });
    if (due.length === 0) return;
    const caches = due.map((b) => this.caches[b]!);
    const replay = due.map((b) => Int32Array.from(this.sinceRefresh[b]!));
    for (const b of due) this.sinceRefresh[b] = [];
    for (const cache of caches) cache.truncate(cache.length(0) - every);
    const out = this.model.prefill(
      caches,
      replay,
      this.keyBias === undefined ? {} : { keyBias: this.keyBias },
    );
    out.logits.dispose();
    try {
      const hidden = (await out.hidden.data()) as Float32Array;
      const width = out.hidden.shape[1];
      due.forEach((b, i) => {
        this.lastHidden[b] = hidden.slice(i * width, (i + 1) * width);
        this.refreshCounts[b]! += 1;
      });
    } finally {
      out.hidden.dispose();
    }
  }

  /** Adds a decode step's reads to each stepped sequence's totals. */
  private countReads(sequences: readonly number[], reads: StepReads): void {
    const perSequence = reads.entries.length / sequences.length;
    sequences.forEach((b, i) => {
      for (let k = i * perSequence; k < (i + 1) * perSequence; k++) {
        this.readEntries[b]! += reads.entries[k]!;
        this.readLive[b]! += reads.live[k]!;
      }
    });
  }

  /** Asks the compute policy for each sequence's controls of the step feeding `tokens`. */
  private controlsFor(
    sequences: readonly number[],
    tokens: Int32Array,
  ): (readonly (LayerControls | undefined)[])[] {
    const compute = this.compute!;
    const width = this.model.config.hidden_size;
    const embeddings = compute.needs?.embedding ? this.embeddingsOf(tokens) : undefined;
    const layers = this.model.config.num_hidden_layers;
    return sequences.map((b, i) => {
      const cache = this.caches[b]!;
      const livePerLayer = new Int32Array(layers);
      for (let l = 0; l < layers; l++) livePerLayer[l] = sumOf(cache.liveCounts(l));
      const observation = {
        step: cache.length(0),
        token: tokens[i]!,
        hidden: this.lastHidden[b]!,
        livePerLayer,
        ...(compute.needs?.logits ? { logits: this.lastLogits[b]! } : {}),
        ...(embeddings === undefined
          ? {}
          : { embedding: embeddings.subarray(i * width, (i + 1) * width) }),
      };
      return compute.controls(observation, this.computeRngs[b]!, this.computeStates[b]);
    });
  }

  /** The input embeddings of the step's tokens; `E_ARG` naming `tokens` for an id outside the vocabulary. */
  private embeddingsOf(tokens: Int32Array): Float32Array {
    const vocab = this.model.config.vocab_size;
    tokens.forEach((token, i) => {
      if (!(token >= 0 && token < vocab)) {
        throw new LetheError('E_ARG', `token ${token} at ${i} is outside [0, ${vocab})`, 'tokens');
      }
    });
    return this.model.embeddingRows(tokens);
  }

  /** Reads the step outputs to the host, frees them, and runs eviction rounds where due. */
  private async download(
    out: { logits: tf.Tensor2D; hidden: tf.Tensor2D },
    advanced: readonly number[],
    sequences: readonly number[],
  ): Promise<StepOutput> {
    const [logitsFlat, hiddenFlat] = await Promise.all([out.logits.data(), out.hidden.data()]);
    const vocab = out.logits.shape[1];
    const width = out.hidden.shape[1];
    out.logits.dispose();
    out.hidden.dispose();
    const logits = sequences.map((_, i) =>
      (logitsFlat as Float32Array).slice(i * vocab, (i + 1) * vocab),
    );
    const hidden = sequences.map((_, i) =>
      (hiddenFlat as Float32Array).slice(i * width, (i + 1) * width),
    );
    sequences.forEach((b, i) => {
      this.evictIfDue(b, advanced[i]!, hidden[i]!);
    });
    return { logits, hidden };
  }

  private evictIfDue(b: number, advanced: number, hidden: Float32Array): void {
    const policy = this.eviction;
    if (!policy) return;
    const cache = this.caches[b]!;
    const since = this.sinceRound[b]!;
    const state = this.evictionStates[b];
    for (let layer = 0; layer < since.length; layer++) {
      since[layer]! += advanced;
      const liveCounts = cache.liveCounts(layer);
      const due = policy.shouldEvict(
        { layer, step: cache.length(layer), liveCounts, sinceLastRound: since[layer]! },
        state,
      );
      if (!due) continue;
      const observation = cache.observe(
        layer,
        roundNeeds(policy.needs, since[layer]!),
        policy.needs.hidden ? hidden : undefined,
      );
      const decision = policy.select(observation, this.evictionRngs[b]!, state);
      const step = cache.length(layer);
      cache.keep(layer, decision);
      since[layer] = 0;
      this.onEvictionRound?.({ sequence: b, layer, step, observation, decision });
    }
  }
}

/** The needs of one round: a policy reading attention since its last round gets only those queries. */
function roundNeeds(needs: ObservationNeeds, sinceLastRound: number): ObservationNeeds {
  if (!needs.attentionSinceLastRound) return needs;
  return { ...needs, attentionWindow: Math.min(needs.attentionWindow, sinceLastRound) };
}

function sumOf(values: Int32Array): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}
