import { assertRecord } from '@lethe/core';
import {
  type Anchors,
  type LayerObservation,
  NO_NEEDS,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '@lethe/kv-cache';
import { scorerProvider } from './scorer-provider';

/** Attention sinks StreamingLLM keeps by default (Xiao et al. 2024; kvpress `n_sink = 4`). */
export const STREAMING_LLM_DEFAULT_ANCHORS: Anchors = Object.freeze({ sinks: 4, window: 0 });

/** Options of {@link StreamingLLMPolicy}: the shared options; anchors default to 4 sinks. */
export type StreamingLLMOptions = ScorerPolicyOptions;

/**
 * StreamingLLM: keep the attention sinks (first 4 positions) and the most recent tokens. The
 * score of an entry is its token position, so the budget left after the sinks goes to the
 * newest entries: the recent window is exactly `budget − sinks` wide.
 */
export class StreamingLLMPolicy extends ScorerPolicy {
  readonly name = 'streaming-llm';
  readonly needs = NO_NEEDS;

  constructor(options: StreamingLLMOptions) {
    super({
      ...assertRecord(options, 'options'),
      anchors: options.anchors ?? STREAMING_LLM_DEFAULT_ANCHORS,
    });
  }

  /** Token position of each entry (newer is more important). */
  score(observation: LayerObservation): Float32Array {
    return Float32Array.from(observation.positions);
  }
}

/**
 * The StreamingLLM provider. Default sinks under a capacity budget: min(4, ⌊kept / 2⌋) of the
 * `kept = capacity − 1` entries a round leaves, so at least half of them goes to the recent
 * window however small the capacity (given `sinks`/`window` are used as is and must fit the
 * capacity); under a rate schedule the paper's 4.
 */
export const streamingLlmProvider = scorerProvider({
  name: 'streaming-llm',
  summary: 'attention sinks plus the newest entries (Xiao et al. 2024)',
  extra: {},
  create: (shared, _extra, round) =>
    new StreamingLLMPolicy({
      ...shared,
      anchors:
        shared.anchors ??
        ('kept' in round
          ? { sinks: Math.min(4, Math.floor(round.kept / 2)), window: 0 }
          : STREAMING_LLM_DEFAULT_ANCHORS),
    }),
});
