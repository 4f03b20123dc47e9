import { Rng } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkObservation,
  KVCache,
  type LayerObservation,
  NO_NEEDS,
  type ObservationNeeds,
  type RandomSource,
  type RowSelectorShape,
  rowSelector,
  ScorerPolicy,
  type ScorerPolicyOptions,
} from '../src/index';

/** Scores an entry by the first channel of its key (a policy that needs keys). */
class FirstChannel extends ScorerPolicy {
  readonly name = 'first-channel';
  readonly needs = { ...NO_NEEDS, keys: true };
  score(observation: LayerObservation): Float32Array {
    const { kvHeads, maxLive, headDim, keys } = observation;
    return Float32Array.from({ length: kvHeads * maxLive }, (_, i) => keys![i * headDim]!);
  }
}

/** Scores an entry by the attention its group's window queries paid it, plus a little noise from `rng`. */
class AttentionMass extends ScorerPolicy {
  readonly name = 'attention-mass';
  readonly needs: ObservationNeeds;
  constructor(options: ScorerPolicyOptions, window: number, sinceLastRound: boolean) {
    super(options);
    this.needs = { ...NO_NEEDS, attentionWindow: window, attentionSinceLastRound: sinceLastRound };
  }
  score(observation: LayerObservation, rng: RandomSource): Float32Array {
    const { kvHeads, queryHeads, maxLive, window, attention } = observation;
    const group = queryHeads / kvHeads;
    const scores = rng.fillUniform(new Float32Array(kvHeads * maxLive)).map((u) => u * 1e-3);
    for (let w = 0; w < window; w++) {
      for (let q = 0; q < queryHeads; q++) {
        for (let i = 0; i < maxLive; i++) {
          scores[Math.floor(q / group) * maxLive + i]! +=
            attention![(w * queryHeads + q) * maxLive + i]!;
        }
      }
    }
    return scores;
  }
}

/** Ranks entries by their stored gate and carries a gate, as GSA does. */
class GateRank extends ScorerPolicy {
  readonly name = 'gate-rank';
  readonly needs = NO_NEEDS;
  readonly gate = { name: 'test-gate', logGates: () => 0 };
  score(observation: LayerObservation): Float32Array {
    return observation.gates!.slice();
  }
}

const SHAPE = { layers: 2, kvHeads: 2, queryHeads: 4, headDim: 4 };
const policy = () =>
  new FirstChannel({
    budget: { keepCount: 9 },
    trigger: { whenLiveExceeds: 9, slack: 2 },
    anchors: { sinks: 2, window: 3 },
  });

/** A runtime's own cache: per (layer, head) plain arrays of positions and key rows. */
interface ForeignHead {
  positions: number[];
  keys: Float32Array[];
}

describe('rowSelector', () => {
  it('keeps exactly what KVCache keeps, step after step, for a runtime’s own arrays', () => {
    const cachePolicy = policy();
    const cache = new KVCache({
      geometry: { layers: SHAPE.layers, kvHeads: SHAPE.kvHeads, headDim: SHAPE.headDim },
      queryHeads: SHAPE.queryHeads,
      anchors: cachePolicy.anchors,
    });
    const select = rowSelector(policy(), SHAPE, new Rng(1));
    const foreign: ForeignHead[][] = Array.from({ length: SHAPE.layers }, () =>
      Array.from({ length: SHAPE.kvHeads }, () => ({ positions: [], keys: [] })),
    );
    const data = new Rng(7);
    const since = new Int32Array(SHAPE.layers);
    let rounds = 0;
    for (let t = 0; t < 80; t++) {
      for (let layer = 0; layer < SHAPE.layers; layer++) {
        const keys = data.normal(SHAPE.kvHeads * SHAPE.headDim);
        cache.append(layer, keys, keys, Int32Array.of(t));
        foreign[layer]!.forEach((head, h) => {
          head.positions.push(t);
          head.keys.push(keys.slice(h * SHAPE.headDim, (h + 1) * SHAPE.headDim));
        });
        since[layer]! += 1;
        const context = {
          layer,
          step: cache.length(layer),
          liveCounts: cache.liveCounts(layer),
          sinceLastRound: since[layer]!,
        };
        if (cachePolicy.shouldEvict(context)) {
          cache.keep(
            layer,
            cachePolicy.select(cache.observe(layer, cachePolicy.needs), new Rng(1)),
          );
          since[layer] = 0;
        }
        const heads = foreign[layer]!;
        const keep = select({
          layer,
          step: t + 1,
          positions: heads.map((head) => Int32Array.from(head.positions)),
          keys: heads.map((head) => {
            const flat = new Float32Array(head.keys.length * SHAPE.headDim);
            head.keys.forEach((row, i) => {
              flat.set(row, i * SHAPE.headDim);
            });
            return flat;
          }),
        });
        if (keep !== undefined) {
          rounds += 1;
          heads.forEach((head, h) => {
            head.positions = [...keep[h]!].map((i) => head.positions[i]!);
            head.keys = [...keep[h]!].map((i) => head.keys[i]!);
          });
        }
        const view = cache.observe(layer, NO_NEEDS);
        heads.forEach((head, h) => {
          const live = view.liveCounts[h]!;
          expect(head.positions).toEqual([
            ...view.positions.subarray(h * view.maxLive, h * view.maxLive + live),
          ]);
        });
      }
    }
    expect(rounds).toBeGreaterThan(20);
  });

  it('refuses a missing or wrong step, and a field the policy needs', () => {
    const select = rowSelector(
      new FirstChannel({ budget: { keepCount: 1 } }),
      { ...SHAPE, layers: 1 },
      new Rng(1),
    );
    const positions = [Int32Array.of(0, 1, 2), Int32Array.of(0, 1, 2)];
    const keys = positions.map(() => new Float32Array(3 * SHAPE.headDim));
    expectLetheError(() => select({ layer: 0, positions, keys } as never), 'E_ARG', 'rows.step');
    expectLetheError(() => select({ layer: 0, step: 2, positions, keys }), 'E_ARG', 'rows.step');
    expectLetheError(() => select({ layer: 0, step: 3, positions }), 'E_ARG', 'rows.keys');
    expect(select({ layer: 0, step: 3, positions, keys })?.map((k) => k.length)).toEqual([1, 1]);
  });
});

describe('checkObservation', () => {
  const valid = (): LayerObservation => ({
    layer: 0,
    kvHeads: 1,
    queryHeads: 1,
    headDim: 1,
    step: 5,
    liveCounts: Int32Array.of(3),
    maxLive: 3,
    positions: Int32Array.of(0, 2, 4),
    ages: Int32Array.of(4, 2, 0),
    window: 0,
  });

  it('accepts a consistent observation and names the first bad field otherwise', () => {
    expect(checkObservation(valid())).toEqual(valid());
    const cases: [Partial<LayerObservation>, string, string][] = [
      [{ step: undefined as never }, 'E_ARG', 'observation.step'],
      [{ step: 2 }, 'E_ARG', 'observation.step'],
      [{ step: 4.5 }, 'E_ARG', 'observation.step'],
      [{ ages: Int32Array.of(4, 2, 5) }, 'E_ARG', 'observation.ages'],
      [{ ages: Int32Array.of(2, 4, 0) }, 'E_ARG', 'observation.ages'],
      [{ positions: Int32Array.of(0, 4, 2) }, 'E_ARG', 'observation.positions'],
      [{ liveCounts: Int32Array.of(4) }, 'E_ARG', 'observation.liveCounts'],
      [{ positions: Int32Array.of(0, 2) }, 'E_SHAPE', 'observation.positions'],
      [{ keys: new Float32Array(2) }, 'E_SHAPE', 'observation.keys'],
      [{ queryHeads: 3, kvHeads: 2 }, 'E_ARG', 'observation.queryHeads'],
      [{ queryHeads: 2, kvHeads: 2 }, 'E_SHAPE', 'observation.liveCounts'],
    ];
    for (const [override, code, argument] of cases) {
      expectLetheError(
        () => checkObservation({ ...valid(), ...override }),
        code as never,
        argument,
      );
    }
  });
});

/** One layer of a runtime's own cache: per KV head its rows, and the query of every token. */
class ForeignLayer {
  readonly heads: { positions: number[]; keys: Float32Array[]; gates: number[] }[];
  readonly queries: Float32Array[] = [];

  constructor(private readonly shape: RowSelectorShape) {
    this.heads = Array.from({ length: shape.kvHeads }, () => ({
      positions: [],
      keys: [],
      gates: [],
    }));
  }

  /** Appends token `t`: its key and gate in every head, `[kvHeads, headDim]` and `[kvHeads]`, and its query. */
  append(t: number, keys: Float32Array, gates: Float32Array, query: Float32Array): void {
    const { headDim } = this.shape;
    this.heads.forEach((head, h) => {
      head.positions.push(t);
      head.keys.push(keys.slice(h * headDim, (h + 1) * headDim));
      head.gates.push(gates[h]!);
    });
    this.queries.push(query);
  }

  liveCounts(): number[] {
    return this.heads.map((head) => head.positions.length);
  }

  positions(): Int32Array[] {
    return this.heads.map((head) => Int32Array.from(head.positions));
  }

  keys(): Float32Array[] {
    const { headDim } = this.shape;
    return this.heads.map((head) => {
      const flat = new Float32Array(head.keys.length * headDim);
      head.keys.forEach((row, i) => {
        flat.set(row, i * headDim);
      });
      return flat;
    });
  }

  gates(): Float32Array[] {
    return this.heads.map((head) => Float32Array.from(head.gates));
  }

  /** Causal softmax attention of the last `window` queries over the live rows, `[window, queryHeads, maxLive]`. */
  attention(window: number): Float32Array {
    const { queryHeads, headDim, kvHeads } = this.shape;
    const maxLive = Math.max(0, ...this.liveCounts());
    const group = queryHeads / kvHeads;
    const step = this.queries.length;
    const out = new Float32Array(window * queryHeads * maxLive);
    for (let w = 0; w < window; w++) {
      const t = step - window + w;
      for (let q = 0; q < queryHeads; q++) {
        const head = this.heads[Math.floor(q / group)]!;
        const query = this.queries[t]!.subarray(q * headDim, (q + 1) * headDim);
        const logits = head.keys.map((key, i) =>
          head.positions[i]! > t
            ? Number.NEGATIVE_INFINITY
            : key.reduce((s, k, c) => s + k * query[c]!, 0),
        );
        const top = Math.max(...logits);
        const e = logits.map((l) => Math.exp(l - top));
        const sum = e.reduce((a, b) => a + b, 0);
        e.forEach((v, i) => {
          out[(w * queryHeads + q) * maxLive + i] = v / sum;
        });
      }
    }
    return out;
  }

  apply(keep: readonly Int32Array[]): void {
    this.heads.forEach((head, h) => {
      const rows = [...keep[h]!];
      head.positions = rows.map((i) => head.positions[i]!);
      head.keys = rows.map((i) => head.keys[i]!);
      head.gates = rows.map((i) => head.gates[i]!);
    });
  }
}

type Kind = 'keys' | 'attention' | 'attention-since' | 'gates';

function policyOf(kind: Kind, cadence: number, keepCount: number, layerGranular: boolean) {
  const anchors = { sinks: 1, window: 1 };
  const byCount = { budget: { keepCount }, trigger: { whenLiveExceeds: keepCount }, anchors };
  switch (kind) {
    case 'keys':
      return new FirstChannel({ ...byCount, granularity: layerGranular ? 'layer' : 'head' });
    case 'gates':
      return new GateRank(byCount);
    default: {
      const rate = { budget: { keepRatio: 0.6 }, trigger: { every: cadence }, anchors };
      return new AttentionMass(rate, 3, kind === 'attention-since');
    }
  }
}

describe('rowSelector, in two phases', () => {
  it('keeps exactly what the one-call use keeps, building rows only for due rounds', () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.nat(1000),
          layers: fc.integer({ min: 1, max: 3 }),
          kvHeads: fc.integer({ min: 1, max: 2 }),
          group: fc.integer({ min: 1, max: 2 }),
          headDim: fc.integer({ min: 1, max: 3 }),
          kind: fc.constantFrom<Kind>('keys', 'attention', 'attention-since', 'gates'),
          cadence: fc.integer({ min: 1, max: 6 }),
          keepCount: fc.integer({ min: 3, max: 6 }),
          layerGranular: fc.boolean(),
          chunks: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 8, maxLength: 24 }),
        }),
        (run) => {
          const shape = {
            layers: run.layers,
            kvHeads: run.kvHeads,
            queryHeads: run.kvHeads * run.group,
            headDim: run.headDim,
          };
          const make = () => policyOf(run.kind, run.cadence, run.keepCount, run.layerGranular);
          const oneCall = rowSelector(make(), shape, new Rng(run.seed));
          const twoPhase = rowSelector(make(), shape, new Rng(run.seed));
          const a = Array.from({ length: run.layers }, () => new ForeignLayer(shape));
          const b = Array.from({ length: run.layers }, () => new ForeignLayer(shape));
          const data = new Rng(run.seed + 1);
          let step = 0;
          let rounds = 0;
          let builds = 0;
          run.chunks.forEach((newTokens, s) => {
            for (let t = step; t < step + newTokens; t++) {
              for (let layer = 0; layer < run.layers; layer++) {
                const keys = data.normal(shape.kvHeads * shape.headDim);
                const gates = data.uniform(shape.kvHeads);
                const query = data.normal(shape.queryHeads * shape.headDim);
                a[layer]!.append(t, keys, gates, query);
                b[layer]!.append(t, keys, gates, query);
              }
            }
            step += newTokens;
            // Layers in a varying order: the adapter counts each layer on its own.
            const order = [...Array(run.layers).keys()];
            if (s % 2 === 1) order.reverse();
            for (const layer of order) {
              // One call: every field, the attention of the most queries the policy reads.
              const mine = a[layer]!;
              const most = Math.min(3, step);
              const kept = oneCall({
                layer,
                step,
                newTokens,
                positions: mine.positions(),
                keys: mine.keys(),
                gates: mine.gates(),
                attention: mine.attention(most),
              });
              // Two phases: ask with the counts, build only what the due round reads.
              const theirs = b[layer]!;
              const round = twoPhase.due({
                layer,
                step,
                newTokens,
                liveCounts: theirs.liveCounts(),
              });
              if (round !== undefined) builds += 1;
              const keptToo = round?.keep({
                positions: theirs.positions(),
                ...(round.needs.keys ? { keys: theirs.keys() } : {}),
                ...(round.gates ? { gates: theirs.gates() } : {}),
                ...(round.window > 0 ? { attention: theirs.attention(round.window) } : {}),
              });
              expect(keptToo).toEqual(kept);
              if (kept !== undefined) {
                rounds += 1;
                mine.apply(kept);
                theirs.apply(kept);
              }
            }
          });
          expect(rounds).toBeGreaterThan(0);
          expect(builds).toBe(rounds);
          b.forEach((layer, l) => {
            expect(layer.heads).toEqual(a[l]!.heads);
          });
        },
      ),
      { numRuns: 150, seed: 32 },
    );
  });

  it('reads no row data when no round is due', () => {
    const select = rowSelector(
      new AttentionMass({ budget: { keepRatio: 0.5 }, trigger: { every: 4 } }, 2, false),
      { ...SHAPE, layers: 1 },
      new Rng(1),
    );
    const positions = [Int32Array.of(0, 1), Int32Array.of(0, 1)];
    const untouchable = {
      layer: 0,
      step: 2,
      newTokens: 2,
      positions,
      get attention(): Float32Array {
        throw new Error('attention read although no round is due');
      },
      get keys(): Float32Array[] {
        throw new Error('keys read although no round is due');
      },
    };
    expect(select(untouchable)).toBeUndefined();
    expect(select.due({ layer: 0, step: 3, liveCounts: [3, 3] })).toBeUndefined();
    // The fourth token is due: 2 + 1 + 1 counted once each.
    const round = select.due({ layer: 0, step: 4, liveCounts: [4, 4] });
    expect(round).toMatchObject({ layer: 0, step: 4, window: 2, gates: false });
  });

  it('sizes the window to the round, and refuses stale rounds and rows of another shape', () => {
    const since = new AttentionMass({ budget: { keepRatio: 0.5 }, trigger: { every: 3 } }, 8, true);
    const select = rowSelector(since, { ...SHAPE, layers: 2 }, new Rng(1));
    const heads = (live: number) =>
      [0, 1].map(() => Int32Array.from({ length: live }, (_, i) => i));
    const attention = (window: number, live: number) =>
      new Float32Array(window * SHAPE.queryHeads * live).fill(1 / live);
    expect(select.due({ layer: 0, step: 3, newTokens: 3, liveCounts: [3, 3] })?.window).toBe(3);
    // A round reads the queries since the layer's previous one: 3, not the policy's 8.
    const first = select.due({ layer: 1, step: 3, newTokens: 3, liveCounts: [3, 3] })!;
    expectLetheError(
      () => first.keep({ positions: heads(3), attention: attention(2, 3) }),
      'E_SHAPE',
      'rows.attention',
    );
    expectLetheError(() => first.keep({ positions: heads(3) }), 'E_ARG', 'rows.attention');
    expectLetheError(
      () => first.keep({ positions: heads(2), attention: attention(3, 2) }),
      'E_SHAPE',
      'rows.positions',
    );
    // Refused rows leave the round open; a longer window is cut to the round's.
    const kept = first.keep({ positions: heads(3), attention: attention(5, 3) });
    expect(kept.map((k) => k.length)).toEqual([2, 2]);
    expectLetheError(() => first.keep({ positions: heads(3) }), 'E_STATE', 'round');
    const second = select.due({ layer: 1, step: 6, newTokens: 3, liveCounts: [5, 5] })!;
    expect(second.window).toBe(3);
    select.due({ layer: 1, step: 7, liveCounts: [6, 6] });
    expectLetheError(
      () => second.keep({ positions: heads(5), attention: attention(3, 5) }),
      'E_STATE',
      'round',
    );
    expectLetheError(
      () => select.due({ layer: 0, step: 8, liveCounts: [1] }),
      'E_SHAPE',
      'query.liveCounts',
    );
    expectLetheError(
      () => select.due({ layer: 2, step: 8, liveCounts: [1, 1] }),
      'E_ARG',
      'query.layer',
    );
    expectLetheError(
      () => select.due({ layer: 0, step: 1, liveCounts: [2, 2] }),
      'E_ARG',
      'query.step',
    );
  });
});

describe('rowSelector, with gates', () => {
  const positions = [Int32Array.of(0, 1, 2, 3), Int32Array.of(0, 1, 2, 3)];
  const gates = [Float32Array.of(0.9, 0.1, 0.8, 0.2), Float32Array.of(0.9, 0.7, 0.1, 0.2)];
  const gated = () =>
    rowSelector(
      new GateRank({ budget: { keepCount: 3 }, anchors: { sinks: 0, window: 1 } }),
      { ...SHAPE, layers: 1 },
      new Rng(1),
    );

  it('keeps the highest gates, a policy carrying a gate refusing rows without them', () => {
    expect(gated().due({ layer: 0, step: 4, liveCounts: [4, 4] })?.gates).toBe(true);
    expect(gated()({ layer: 0, step: 4, positions, gates })?.map((k) => [...k])).toEqual([
      [0, 2, 3],
      [0, 1, 3],
    ]);
    expectLetheError(() => gated()({ layer: 0, step: 4, positions }), 'E_ARG', 'rows.gates');
    expectLetheError(
      () => gated()({ layer: 0, step: 4, positions, gates: [gates[0]!, Float32Array.of(1)] }),
      'E_SHAPE',
      'rows.gates',
    );
  });

  it('hands given gates to a policy without a gate too', () => {
    const seen: LayerObservation[] = [];
    const policy = new FirstChannel({ budget: { keepCount: 3 } });
    const spy = Object.assign(Object.create(policy), {
      select: (observation: LayerObservation, rng: RandomSource) => {
        seen.push(observation);
        return policy.select(observation, rng);
      },
    });
    const select = rowSelector(spy, { ...SHAPE, layers: 1 }, new Rng(1));
    const keys = positions.map(() => new Float32Array(4 * SHAPE.headDim));
    expect(select.due({ layer: 0, step: 4, liveCounts: [4, 4] })?.gates).toBe(false);
    select({ layer: 0, step: 5, positions, keys, gates });
    expect([...seen[0]!.gates!]).toEqual([...gates[0]!, ...gates[1]!].map(Math.fround));
  });
});
