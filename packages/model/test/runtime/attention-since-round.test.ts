import {
  type Anchors,
  type EvictionPolicy,
  type KeepDecision,
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
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
const prompts = [Int32Array.from({ length: 11 }, (_, i) => (5 * i + 1) % 23), Int32Array.of(4, 5)];
const WINDOW = 6;

/** Keeps everything; rounds at every third token and at token 7, reading `WINDOW` queries. */
class IrregularRounds implements EvictionPolicy {
  readonly name = 'irregular-rounds-test';
  readonly anchors: Anchors = { sinks: 0, window: 0 };
  readonly needs: ObservationNeeds;

  constructor(sinceLastRound: boolean) {
    this.needs = {
      ...NO_NEEDS,
      attentionWindow: WINDOW,
      ...(sinceLastRound ? { attentionSinceLastRound: true } : {}),
    };
  }

  shouldEvict(context: TriggerContext): boolean {
    return context.step % 3 === 0 || context.step === 7;
  }

  select(observation: LayerObservation): KeepDecision {
    const keep = Array.from(observation.liveCounts, (live) =>
      Int32Array.from({ length: live }, (_, i) => i),
    );
    return { granularity: 'head', keep };
  }
}

interface Round {
  readonly key: string;
  readonly step: number;
  readonly window: number;
  readonly attention: Float32Array;
  readonly rowWidth: number;
}

async function rounds(sinceLastRound: boolean): Promise<Round[]> {
  const model = lively(config, 3);
  const seen: Round[] = [];
  await generate({
    model,
    prompts,
    maxNewTokens: 12,
    sampling: { temperature: 0 },
    eviction: new IrregularRounds(sinceLastRound),
    onEvictionRound: ({ sequence, layer, step, observation }) => {
      seen.push({
        key: `${sequence}/${layer}`,
        step,
        window: observation.window,
        attention: observation.attention!,
        rowWidth: observation.queryHeads * observation.maxLive,
      });
    },
  });
  model.dispose();
  return seen;
}

describe('needs.attentionSinceLastRound', () => {
  it("gives each round only the queries since the layer's previous round, rows equal to the full window's", async () => {
    const [full, since] = [await rounds(false), await rounds(true)];
    expect(since.map((r) => [r.key, r.step])).toEqual(full.map((r) => [r.key, r.step]));
    const previous = new Map<string, number>();
    let shorter = 0;
    since.forEach((round, i) => {
      const fresh = round.step - (previous.get(round.key) ?? 0);
      previous.set(round.key, round.step);
      expect(round.window).toBe(Math.min(WINDOW, fresh));
      if (round.window < full[i]!.window) shorter++;
      const whole = full[i]!;
      expect(round.rowWidth).toBe(whole.rowWidth);
      const tail = whole.attention.subarray((whole.window - round.window) * whole.rowWidth);
      expect(Array.from(round.attention)).toEqual(Array.from(tail));
    });
    // Rounds one to three tokens apart: most rounds read fewer rows than the window.
    expect(shorter).toBeGreaterThan(since.length / 2);
  });
});
