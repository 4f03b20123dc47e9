import type { KeepDecision } from '@lethe/kv-cache';
import { describe, expect, it } from 'vitest';
import { identityNormalization } from '../../src/features/token-features';
import { NammPolicy, type NammPolicyOptions } from '../../src/policy/namm-policy';
import { scorerParameterCount } from '../../src/scorer/genome-layout';
import { createScorer, type Scorer } from '../../src/scorer/scorer';
import type { ScorerSpec } from '../../src/scorer/scorer-spec';
import { hashedHistory, syntheticObservation } from '../synthetic-observation';

const BAM: ScorerSpec = { kind: 'bam', features: 25, hidden: 8 };
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** A genome of small pseudo-random values (seeded), so scores spread around 0. */
function randomGenome(spec: ScorerSpec, seed: number, scale = 0.5): Float64Array {
  let x = seed >>> 0;
  return Float64Array.from({ length: scorerParameterCount(spec) }, () => {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return (x / 2 ** 32 - 0.5) * 2 * scale;
  });
}

/** A scorer that returns the scores `table(head, n)` for the head it is called for (heads in order). */
function fixedScorer(table: (head: number, n: number) => number[]): Scorer {
  let call = 0;
  return {
    spec: BAM,
    parameterCount: 0,
    score(_x, n, out) {
      out.set(table(call++ % 2, n));
    },
  };
}

function policy(options: Partial<NammPolicyOptions> & { scorer: Scorer }): NammPolicy {
  return new NammPolicy({
    features: 'spectrogram',
    normalization: identityNormalization(),
    updateInterval: 32,
    ...options,
  });
}

const observation = (step: number, seed = 1, live = [range(step), range(step)]) =>
  syntheticObservation({
    kvHeads: 2,
    group: 2,
    live,
    step,
    window: 32,
    history: hashedHistory(seed),
  });

const kept = (decision: KeepDecision) =>
  decision.granularity === 'head' ? decision.keep.map((k) => [...k]) : [];

describe('NammPolicy', () => {
  it('keeps everything with the zero genome (every score is 0)', () => {
    const p = policy({ scorer: createScorer(BAM, new Float64Array(scorerParameterCount(BAM))) });
    expect(kept(p.select(observation(32), undefined, p.createState()))).toEqual([
      range(32),
      range(32),
    ]);
  });

  it('keeps the entries scoring ≥ the threshold, and the newest whatever its score', () => {
    const scores = (head: number, n: number) => range(n).map((i) => (i % 3) - 1 - head * 0.5);
    const p = policy({ scorer: fixedScorer(scores) });
    const decision = kept(p.select(observation(32), undefined, p.createState()));
    expect(decision[0]).toEqual(range(32).filter((i) => i % 3 >= 1 || i === 31));
    expect(decision[1]).toEqual(range(32).filter((i) => i % 3 === 2 || i === 31));
    const shifted = policy({ scorer: fixedScorer(scores), threshold: -1 });
    expect(kept(shifted.select(observation(32), undefined, shifted.createState()))[0]).toEqual(
      range(32),
    );
  });

  it('returns the scores it chose from, laid out as the observation (KeepDecision.scores)', () => {
    const scores = (head: number, n: number) => range(n).map((i) => (i % 5) - head);
    const p = policy({ scorer: fixedScorer(scores) });
    const obs = observation(32);
    const decision = p.select(obs, undefined, p.createState());
    expect(obs.maxLive).toBe(32);
    expect([...decision.scores!]).toEqual([...scores(0, 32), ...scores(1, 32)]);
  });

  it('under a capacity keeps the best-scoring `kept` (the newest among them) when more pass', () => {
    const scores = (_: number, n: number) => range(n).map((i) => Math.cos(i));
    const p = policy({ scorer: fixedScorer(scores), budget: { kind: 'capacity', kept: 5 } });
    const decision = kept(p.select(observation(32), undefined, p.createState()));
    const best = range(31)
      .sort((a, b) => Math.cos(b) - Math.cos(a))
      .slice(0, 4);
    expect(decision[0]).toEqual([...best, 31].sort((a, b) => a - b));
  });

  it('under a rate keeps ⌈keepRatio · live⌉ per head by score, whatever the threshold', () => {
    const scores = (_: number, n: number) => range(n).map((i) => -10 - i);
    const p = policy({ scorer: fixedScorer(scores), budget: { kind: 'rate', keepRatio: 0.3 } });
    const decision = kept(p.select(observation(32), undefined, p.createState()));
    expect(decision.map((k) => k.length)).toEqual([10, 10]);
    expect(decision[0]).toEqual([...range(9), 31]);
  });

  it('with equal heads evicts from every head as many as the head with the fewest below 0', () => {
    // Head 0 has 10 entries below 0, head 1 has 4: both evict their 4 lowest.
    const scores = (head: number, n: number) =>
      range(n).map((i) => (i < (head === 0 ? 10 : 4) ? -1 - i : 1 + i));
    const p = policy({ scorer: fixedScorer(scores), equalHeads: true });
    const decision = kept(p.select(observation(32), undefined, p.createState()));
    expect(decision[0]).toEqual(range(32).filter((i) => i < 6 || i >= 10));
    expect(decision[1]).toEqual(range(32).filter((i) => i >= 4));
  });

  it('keeps each sequence’s memory in its own state: a batch decides as each sequence alone', () => {
    const spec: ScorerSpec = { kind: 'bam', features: 25, hidden: 8 };
    const genome = randomGenome(spec, 7);
    const make = () =>
      policy({
        scorer: createScorer(spec, genome),
        updateInterval: 32,
        budget: { kind: 'rate', keepRatio: 0.75 },
      });
    const run = (
      p: NammPolicy,
      state: ReturnType<NammPolicy['createState']>,
      seed: number,
      step: number,
      live: number[][],
    ) => kept(p.select(observation(step, seed, live), undefined, state));
    const shared = make();
    const [a, b] = [shared.createState(), shared.createState()];
    const liveA = [range(32), range(32)];
    const liveB = [range(32), range(32)];
    const batch: number[][][] = [];
    for (const step of [32, 64, 96]) {
      const da = run(shared, a, 1, step, liveA);
      const db = run(shared, b, 2, step, liveB);
      batch.push(da, db);
      da.forEach((keep, h) => {
        liveA[h] = [...keep.map((i) => liveA[h]![i]!), ...range(32).map((i) => step + i)];
      });
      db.forEach((keep, h) => {
        liveB[h] = [...keep.map((i) => liveB[h]![i]!), ...range(32).map((i) => step + i)];
      });
    }
    for (const [seed, offset] of [
      [1, 0],
      [2, 1],
    ] as const) {
      const alone = make();
      const state = alone.createState();
      const live = [range(32), range(32)];
      [32, 64, 96].forEach((step, round) => {
        const d = run(alone, state, seed, step, live);
        expect(d).toEqual(batch[2 * round + offset]);
        d.forEach((keep, h) => {
          live[h] = [...keep.map((i) => live[h]![i]!), ...range(32).map((i) => step + i)];
        });
      });
    }
    // The two sequences' different attention made different choices.
    expect(batch[4]).not.toEqual(batch[5]);
  });

  it('triggers every updateInterval tokens and whenever a head exceeds its capacity', () => {
    const p = policy({
      scorer: fixedScorer(() => []),
      updateInterval: 16,
      budget: { kind: 'capacity', kept: 40 },
    });
    const at = (step: number, since: number, live: number) =>
      p.shouldEvict({ layer: 0, step, sinceLastRound: since, liveCounts: Int32Array.of(live, 3) });
    expect([at(16, 16, 16), at(20, 4, 20), at(37, 16, 30), at(50, 2, 41)]).toEqual([
      true,
      false,
      true,
      true,
    ]);
    expect(p.prefillChunk).toBe(16);
    expect(p.needs.attentionWindow).toBe(16);
  });

  it('refuses bad options and a missing state, naming them', () => {
    const scorer = fixedScorer(() => []);
    const cases: [Partial<NammPolicyOptions>, string][] = [
      [{ updateInterval: 0 }, 'updateInterval'],
      [{ threshold: Number.NaN }, 'threshold'],
      [{ features: 'age' }, 'scorer'],
      [{ budget: { kind: 'capacity', kept: 0 } }, 'budget.kept'],
      [{ budget: { kind: 'rate', keepRatio: 1.5 } }, 'budget.keepRatio'],
      [{ budget: { kind: 'rate', keepRatio: 0.5 }, equalHeads: true }, 'equalHeads'],
    ];
    for (const [options, argument] of cases) {
      expect(() => policy({ scorer, ...options })).toThrowError(
        expect.objectContaining({ code: 'E_ARG', argument }),
      );
    }
    expect(() => policy({ scorer }).select(observation(32), undefined)).toThrowError(
      expect.objectContaining({ code: 'E_ARG', argument: 'state' }),
    );
  });

  it('refuses a NaN or ±∞ score, naming the scorer that produced it, under every budget', () => {
    const budgets: NammPolicyOptions['budget'][] = [
      undefined,
      { kind: 'capacity', kept: 5 },
      { kind: 'rate', keepRatio: 0.5 },
    ];
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      // Head 1's entry 3 scores `bad`; NaN would otherwise be "below the threshold": evicted.
      const scores = (head: number, n: number) =>
        range(n).map((i) => (head === 1 && i === 3 ? bad : 1));
      for (const budget of budgets) {
        const p = policy({ scorer: fixedScorer(scores), budget });
        expect(() => p.select(observation(32), undefined, p.createState())).toThrowError(
          expect.objectContaining({
            code: 'E_ARG',
            argument: 'scorer',
            message: expect.stringContaining(
              `entry 3 (token position 3) of layer 0, KV head 1 ${bad}`,
            ),
          }),
        );
      }
    }
  });
});
