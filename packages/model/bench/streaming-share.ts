import {
  type EvictionPolicy,
  type KeepDecision,
  type LayerObservation,
  NO_NEEDS,
  type RandomSource,
  type TriggerContext,
} from '@lethe/kv-cache';
import { STREAMING_LLM_DEFAULT_ANCHORS, StreamingLLMPolicy } from '@lethe/policies-heuristic';

/**
 * StreamingLLM holding a share of the context rather than a fixed number of entries: with `K`
 * tokens so far and the target `⌈share·K⌉`, a round runs once a head holds more than the target
 * plus half the slack and keeps the target minus half the slack (the sinks and the newest
 * entries), so a head holds `share·K` on average — the entries a token keep rate κ = `share`
 * reads of the same growing context. A fixed keep count (`StreamingLLMPolicy` with
 * `{ keepCount: share·K₀ }`) holds a smaller and smaller share as the context grows past `K₀`.
 */
export class StreamingShareOfContext implements EvictionPolicy {
  readonly name = 'streaming-llm-share-of-context';
  readonly needs = NO_NEEDS;
  readonly anchors = STREAMING_LLM_DEFAULT_ANCHORS;

  /**
   * @param share the share of the context held on average, in (0, 1].
   * @param slack entries a head may grow by between rounds (an even number).
   */
  constructor(
    private readonly share: number,
    private readonly slack: number,
  ) {}

  shouldEvict(context: TriggerContext): boolean {
    const most = Math.max(...context.liveCounts);
    return most > this.target(context.step) + this.slack / 2;
  }

  select(observation: LayerObservation, rng: RandomSource): KeepDecision {
    const keepCount = this.target(observation.step) - this.slack / 2;
    return new StreamingLLMPolicy({ budget: { keepCount } }).select(observation, rng);
  }

  private target(tokens: number): number {
    return Math.ceil(this.share * tokens);
  }
}
