import { assertInteger, assertRecord, LetheError } from '@lethe/core';
import {
  type Anchors,
  checkAnchorsFit,
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import * as v from 'valibot';
import { groupSize, requireAttention } from './observation-fields';
import { scorerProvider } from './scorer-provider';

/** SnapKV's observation window: the last 64 queries (kvpress `window_size`). */
export const SNAPKV_DEFAULT_WINDOW = 64;
/** SnapKV's average-pooling kernel along keys (kvpress `kernel_size`). */
export const SNAPKV_DEFAULT_KERNEL = 5;

/** Options of {@link SnapKVPolicy}. */
export interface SnapKVOptions extends ScorerPolicyOptions {
  /** Number of recent queries whose attention is observed. Default 64. */
  readonly windowSize?: number;
  /** Odd width of the average pooling along keys. Default 5. */
  readonly kernelSize?: number;
}

/**
 * SnapKV (Li et al. 2024, as in kvpress): each entry's score is the attention it receives from
 * the last `windowSize` queries, averaged over those queries, smoothed by a 1-D average pool of
 * width `kernelSize` along the live entries (zero padding, divisor always `kernelSize`, like
 * PyTorch's `avg_pool1d`), and averaged over the query heads of the GQA group.
 *
 * The observation window's own entries (written by the last `window` tokens) are not pooled and
 * are always kept: the policy's anchor window is widened to at least `windowSize`, and their
 * score is set to the head's highest pooled score (kvpress pads them with the maximum).
 */
export class SnapKVPolicy extends ScorerPolicy {
  readonly name = 'snapkv';
  readonly needs: ObservationNeeds;
  /** Observed queries. */
  readonly windowSize: number;
  /** Pooling width. */
  readonly kernelSize: number;

  constructor(options: SnapKVOptions) {
    assertRecord(options, 'options');
    const windowSize = assertInteger(options.windowSize ?? SNAPKV_DEFAULT_WINDOW, 'windowSize', 1);
    const given: Anchors = assertRecord(options.anchors ?? { sinks: 0, window: 0 }, 'anchors');
    const anchors = { sinks: given.sinks, window: Math.max(given.window, windowSize) };
    // The observation window is always kept: when it cannot fit, name the option that set it.
    if (typeof options.budget === 'object' && options.budget !== null) {
      checkAnchorsFit(options.budget, anchors, options.blockSize, 'windowSize');
    }
    super({ ...options, anchors });
    this.windowSize = windowSize;
    this.kernelSize = assertInteger(options.kernelSize ?? SNAPKV_DEFAULT_KERNEL, 'kernelSize', 1);
    if (this.kernelSize % 2 === 0) {
      throw new LetheError('E_ARG', `must be odd, got ${this.kernelSize}`, 'kernelSize');
    }
    this.needs = Object.freeze({ ...NO_NEEDS, attentionWindow: windowSize });
  }

  /** Window-averaged, pooled, group-averaged attention per entry; window entries get the row maximum. */
  score(observation: LayerObservation): Float32Array {
    const attention = requireAttention(observation);
    const { kvHeads, queryHeads, maxLive, liveCounts, ages, window } = observation;
    const group = groupSize(observation);
    const radius = (this.kernelSize - 1) / 2;
    const scores = new Float32Array(kvHeads * maxLive);
    const averaged = new Float64Array(maxLive);
    const pooledOverGroup = new Float64Array(maxLive);
    for (let h = 0; h < kvHeads; h++) {
      const row = h * maxLive;
      // Entries older than the observation window are scored; the window's own entries (written
      // by the last `window` tokens, age < window) are not.
      let prefix = 0;
      while (prefix < liveCounts[h] && ages[row + prefix] >= window) prefix++;
      pooledOverGroup.fill(0);
      for (let q = h * group; q < (h + 1) * group; q++) {
        averaged.fill(0);
        for (let w = 0; w < window; w++) {
          const offset = (w * queryHeads + q) * maxLive;
          for (let i = 0; i < prefix; i++) averaged[i] += attention[offset + i] / window;
        }
        for (let i = 0; i < prefix; i++) {
          let pooled = 0;
          for (let j = Math.max(0, i - radius); j <= Math.min(prefix - 1, i + radius); j++) {
            pooled += averaged[j];
          }
          pooledOverGroup[i] += pooled / this.kernelSize / group;
        }
      }
      let best = 0;
      for (let i = 0; i < prefix; i++) {
        scores[row + i] = pooledOverGroup[i];
        best = Math.max(best, scores[row + i]);
      }
      scores.fill(best, row + prefix, row + liveCounts[h]);
    }
    return scores;
  }
}

/**
 * SnapKV's observation window when none is given, for rounds that keep `kept` entries per KV
 * head: `min(64, max(1, ⌊kept / 4⌋))` (under a rate schedule `kept` is the tokens between rounds). The window is always kept, so kvpress's 64 would hold at
 * least 64 entries per head whatever the budget; a quarter leaves three quarters to the scored
 * entries.
 */
export function defaultSnapKVWindow(kept: number): number {
  return Math.min(SNAPKV_DEFAULT_WINDOW, Math.max(1, Math.floor(kept / 4)));
}

/** The SnapKV provider. */
export const snapKVProvider = scorerProvider({
  name: 'snapkv',
  summary: 'attention of the last queries, pooled along keys (Li et al. 2024)',
  extra: {
    windowSize: v.pipe(
      v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      v.description(
        'observed recent queries; default min(64, max(1, ⌊(capacity − 1) / 4⌋)), under a rate schedule ⌊every / 4⌋ in place of (capacity − 1) / 4',
      ),
    ),
    kernelSize: v.pipe(
      v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), SNAPKV_DEFAULT_KERNEL),
      v.description('odd width of the average pooling along keys'),
    ),
  },
  create: (shared, extra, round) =>
    new SnapKVPolicy({
      ...shared,
      windowSize:
        extra.windowSize ?? defaultSnapKVWindow('kept' in round ? round.kept : round.every),
      kernelSize: extra.kernelSize,
    }),
});
