import type {
  ComputePolicy,
  EvictionPolicy,
  KVCacheStore,
  LayerControls,
  ReadSelector,
  StepObservation,
} from '@lethe/kv-cache';
import { Rng } from '@lethe/tensor';
import type { KeyBiasHook } from '../decoder/index';
import { ComputeSteering } from './compute-steering';
import type { ComputeUsage } from './compute-usage';
import { type EvictionRound, EvictionRounds, sumOf } from './eviction-rounds';
import { gateHook } from './gate-hook';
import type { DecodeReads } from './generation-stats';
import { RefreshSchedule } from './refresh-schedule';

/** The policies one sequence runs under (a `PolicySet` less its prompt conditioning). */
export interface SequencePolicies {
  /** What the cache keeps (and, with a `gate`, the gate the model runs). */
  readonly eviction?: EvictionPolicy;
  /** Per-step controls, and SOL's KV refresh (`refreshEvery`). */
  readonly compute?: ComputePolicy;
  /** What each decode step reads. */
  readonly readSelector?: ReadSelector;
  /**
   * Most live entries per KV head the eviction policy holds a head to (`PolicySet.ceiling`):
   * prefill chunks end where they would pass it.
   */
  readonly ceiling?: number;
}

const DENSE_USAGE: ComputeUsage = Object.freeze({
  steps: 0,
  tokenKeep: 1,
  mlpInputKeep: 1,
  precision: 1,
});

const NONE = new Float32Array(0);

/**
 * Everything one sequence carries from step to step besides its tokens: its cache, its policies
 * with their per-sequence state and random streams (`evict-<id>` and `compute-<id>` forks of
 * `new Rng(seed)`), the last outputs a compute or eviction policy observes, the entries its decode
 * steps read, and its KV-refresh schedule. `GenerationSession` keeps one per sequence of its
 * batch, all under the same policies; `ContinuousBatcher` one per request, each under its own.
 * The batch-level parts of a step are in `batch-steps.ts`.
 */
export class SequenceState {
  /** The sequence's cache. */
  readonly cache: KVCacheStore;
  /** Its read selector, or undefined. */
  readonly readSelector: ReadSelector | undefined;
  /** Its eviction policy's gate as the model's key-bias hook, or undefined. */
  readonly keyBias: KeyBiasHook | undefined;
  /** Its eviction policy at work, or undefined (full cache). */
  readonly eviction: EvictionRounds | undefined;
  /** Its compute policy at work, or undefined (dense steps). */
  readonly compute: ComputeSteering | undefined;
  /** Its KV-refresh schedule (a compute policy's `refreshEvery`), or undefined. */
  readonly refresh: RefreshSchedule | undefined;
  /** Final hidden state of its last token (what a compute policy observes next). */
  lastHidden: Float32Array = NONE;
  /** Next-token logits of its last prefill chunk or decode step. */
  lastLogits: Float32Array = NONE;
  private readEntries = 0;
  private readLive = 0;

  /**
   * @param cache the sequence's cache (empty or not).
   * @param policies its policies (validated by the caller).
   * @param seed seed of its policies' random streams.
   * @param streamId its stream id (the fork keys' suffix).
   * @param layers the model's layers.
   */
  constructor(
    cache: KVCacheStore,
    policies: SequencePolicies,
    seed: number,
    streamId: number,
    layers: number,
  ) {
    this.cache = cache;
    this.readSelector = policies.readSelector;
    const gate = policies.eviction?.gate;
    this.keyBias = gate === undefined ? undefined : gateHook(gate);
    const root = new Rng(seed);
    this.eviction =
      policies.eviction === undefined
        ? undefined
        : new EvictionRounds(policies.eviction, root.fork(`evict-${streamId}`), layers);
    this.compute =
      policies.compute === undefined
        ? undefined
        : new ComputeSteering(policies.compute, root.fork(`compute-${streamId}`));
    const every = policies.compute?.refreshEvery;
    this.refresh = every === undefined ? undefined : new RefreshSchedule(every);
  }

  /** What its decode steps read so far, summed over steps, layers and KV heads. */
  get decodeReads(): DecodeReads {
    return { entries: this.readEntries, live: this.readLive };
  }

  /** Its compute policy's realised averages (`steps` 0 and all 1 without one). */
  get computeUsage(): ComputeUsage {
    return this.compute?.usage() ?? DENSE_USAGE;
  }

  /** KV refreshes it ran. */
  get refreshes(): number {
    return this.refresh?.refreshes ?? 0;
  }

  /**
   * Its compute policy's controls for the decode step feeding `token`, or undefined without a
   * compute policy. The policy observes the position, the token, the last hidden state, the live
   * entries per layer and, as its needs ask, the last logits and `embedding` (the token's input
   * embedding, which the caller reads).
   *
   * @throws the policy's errors.
   */
  stepControls(
    token: number,
    embedding: Float32Array | undefined,
  ): readonly (LayerControls | undefined)[] | undefined {
    const compute = this.compute;
    if (compute === undefined) return undefined;
    const cache = this.cache;
    const layers = cache.geometry.layers;
    const livePerLayer = new Int32Array(layers);
    for (let l = 0; l < layers; l++) livePerLayer[l] = sumOf(cache.liveCounts(l));
    const needs = compute.policy.needs;
    const observation: StepObservation = {
      step: cache.length(0),
      token,
      hidden: this.lastHidden,
      livePerLayer,
      ...(needs?.logits ? { logits: this.lastLogits } : {}),
      ...(embedding === undefined ? {} : { embedding }),
    };
    return compute.controls(observation);
  }

  /**
   * Takes the outputs of a prefill chunk or decode step that appended `advanced` tokens to its
   * cache, then runs the eviction rounds now due, leaving room for `incoming` tokens before the
   * next (see `LayerObservation.incoming`).
   *
   * @throws the eviction policy's and the cache's errors.
   */
  async advance(
    logits: Float32Array,
    hidden: Float32Array,
    advanced: number,
    onRound?: (round: EvictionRound) => void,
    incoming = 1,
  ): Promise<void> {
    this.lastLogits = logits;
    this.lastHidden = hidden;
    await this.eviction?.run(this.cache, advanced, hidden, onRound, incoming);
  }

  /**
   * Counts a decode step: the entries it read against those live (summed over layers and KV
   * heads) and the controls it ran with.
   */
  recordDecode(
    entries: number,
    live: number,
    controls: readonly (LayerControls | undefined)[] | undefined,
  ): void {
    this.readEntries += entries;
    this.readLive += live;
    if (controls !== undefined) this.compute?.record(controls);
  }
}
