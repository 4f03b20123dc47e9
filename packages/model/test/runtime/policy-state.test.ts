import {
  type EvictionPolicy,
  type KeepDecision,
  type LayerObservation,
  NO_NEEDS,
  type TriggerContext,
} from '@lethe/kv-cache';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/runtime/index';
import { lively, tinyConfig } from '../decoder/helpers';

beforeAll(async () => {
  await initBackend('wasm');
});

const config = tinyConfig({ vocab_size: 23 });
const prompts = [Int32Array.of(1, 2, 3), Int32Array.of(4, 5, 6, 7, 8, 9, 10)];

/** Per-sequence memory: rounds seen so far, per layer. */
interface Rounds {
  readonly perLayer: number[];
}

/**
 * A policy whose decisions depend on its memory: every round it evicts the entry at index
 * (rounds so far mod live), so a sequence that saw another sequence's rounds decides otherwise.
 * With `shared`, it ignores the runtime's per-sequence state and keeps one counter for all.
 */
class RoundCountingPolicy implements EvictionPolicy<Rounds> {
  readonly name = 'round-counting';
  readonly needs = NO_NEEDS;
  readonly anchors = { sinks: 0, window: 1 };
  private readonly common: Rounds = { perLayer: [0, 0, 0, 0] };
  constructor(private readonly shared: boolean) {}

  createState(): Rounds {
    return { perLayer: [0, 0, 0, 0] };
  }

  shouldEvict(context: TriggerContext): boolean {
    return context.liveCounts[0]! > 4;
  }

  select(observation: LayerObservation, _rng: unknown, state?: Rounds): KeepDecision {
    const memory = this.shared ? this.common : state!;
    const live = observation.liveCounts[0]!;
    const drop = memory.perLayer[observation.layer]! % (live - 1);
    memory.perLayer[observation.layer]! += 1;
    const keep = Int32Array.from({ length: live }, (_, i) => i).filter((i) => i !== drop);
    return { granularity: 'layer', keep };
  }
}

async function run(policy: RoundCountingPolicy, batch: readonly Int32Array[], ids: number[]) {
  const result = await generate({
    model: lively(config, 7),
    prompts: batch,
    streamIds: ids,
    maxNewTokens: 12,
    sampling: { temperature: 0 },
    prefillChunk: 1,
    eviction: policy,
  });
  return result.caches.map((cache) => [...cache.observe(0, NO_NEEDS).positions]);
}

describe('per-sequence policy state', () => {
  it('gives each sequence of a batch its own state: batched equals alone', async () => {
    const batched = await run(new RoundCountingPolicy(false), prompts, [0, 1]);
    expect(await run(new RoundCountingPolicy(false), [prompts[0]!], [0])).toEqual([batched[0]]);
    expect(await run(new RoundCountingPolicy(false), [prompts[1]!], [1])).toEqual([batched[1]]);
  });

  it('a policy that shares memory across the batch is caught by the same comparison', async () => {
    const batched = await run(new RoundCountingPolicy(true), prompts, [0, 1]);
    const alone = await run(new RoundCountingPolicy(true), [prompts[1]!], [1]);
    expect(alone[0]).not.toEqual(batched[1]);
  });
});
