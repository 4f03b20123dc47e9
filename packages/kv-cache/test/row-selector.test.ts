import { Rng } from '@lethe/core';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import {
  checkObservation,
  KVCache,
  type LayerObservation,
  NO_NEEDS,
  rowSelector,
  ScorerPolicy,
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

const SHAPE = { layers: 2, kvHeads: 2, queryHeads: 4, headDim: 4 };
const policy = () =>
  new FirstChannel({
    budget: { capacity: 9 },
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
      new FirstChannel({ budget: { capacity: 1 } }),
      { ...SHAPE, layers: 1 },
      new Rng(1),
    );
    const positions = [Int32Array.of(0, 1, 2), Int32Array.of(0, 1, 2)];
    const keys = positions.map(() => new Float32Array(3 * SHAPE.headDim));
    expectLetheError(() => select({ layer: 0, positions, keys } as never), 'E_ARG', 'rows.step');
    expectLetheError(
      () => select({ layer: 0, step: 2, positions, keys }),
      'E_ARG',
      'observation.step',
    );
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
