import type { LayerObservation } from '@lethe/kv-cache';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { TOVAPolicy } from '../src/index';
import { keptOf, lcg, NO_RANDOM, observation, range } from './observation';

/** `kvHeads` aligned heads of `live` entries, `group` query heads each, 3 observed queries. */
function tovaObservation(
  kvHeads: number,
  group: number,
  live: number,
  attentionOf: (w: number, q: number, i: number) => number,
): LayerObservation {
  const window = 3;
  const queryHeads = kvHeads * group;
  const attention = new Float32Array(window * queryHeads * live);
  for (let w = 0; w < window; w++) {
    for (let q = 0; q < queryHeads; q++) {
      for (let i = 0; i < live; i++)
        attention[(w * queryHeads + q) * live + i] = attentionOf(w, q, i);
    }
  }
  const rows = range(kvHeads).map(() => range(live));
  return { ...observation(rows, { queryHeads }), window, attention };
}

describe('TOVAPolicy', () => {
  it('uses only the last query', () => {
    // Earlier queries attend to entry 1; the last one to entry 4.
    const obs = tovaObservation(1, 2, 6, (w, _, i) =>
      w < 2 ? (i === 1 ? 0.9 : 0.02) : i === 4 ? 0.6 : 0.08,
    );
    const policy = new TOVAPolicy({ budget: { keepCount: 1 } });
    expect(keptOf(policy.select(obs, NO_RANDOM))).toEqual([4]);
    expect(policy.needs.attentionWindow).toBe(1);
  });

  it('averages the last query over all heads into one keep set per layer', () => {
    const random = lcg(5);
    const kvHeads = 2;
    const group = 2;
    const live = 12;
    const obs = tovaObservation(kvHeads, group, live, () => random());
    const decision = new TOVAPolicy({ budget: { keepCount: 4 } }).select(obs, NO_RANDOM);
    expect(decision.granularity).toBe('layer');
    const attention = obs.attention!;
    const last = 2 * kvHeads * group * live;
    const mean = range(live).map(
      (i) =>
        range(kvHeads * group).reduce((s, q) => s + attention[last + q * live + i], 0) /
        (kvHeads * group),
    );
    const want = range(live)
      .sort((a, b) => mean[b] - mean[a])
      .slice(0, 4)
      .sort((a, b) => a - b);
    expect(keptOf(decision)).toEqual(want);
  });

  it('offers a per-KV-head variant and needs an observed query', () => {
    const obs = tovaObservation(2, 1, 4, (_, q, i) => (i === q ? 1 : 0));
    const decision = new TOVAPolicy({ budget: { keepCount: 1 }, granularity: 'head' }).select(
      obs,
      NO_RANDOM,
    );
    expect([keptOf(decision, 0), keptOf(decision, 1)]).toEqual([[0], [1]]);
    expectLetheError(
      () => new TOVAPolicy({ budget: { keepCount: 1 } }).select(observation([range(4)]), NO_RANDOM),
      'E_ARG',
      'observation.window',
    );
  });
});
