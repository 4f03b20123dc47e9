import type { LayerView } from '@lethe/kv-cache';
import { pageBoundByDefinition } from './quest-reference';

/** The always-read entries of a κ read: first `sinks`, last `window` live entries per head. */
export interface ReferenceAnchors {
  readonly sinks: number;
  readonly window: number;
}

/**
 * SOL's token keep read (κ) of one layer, written out from its documented definition with plain
 * loops and none of the library's code: per KV head of `K` live entries, `b = ⌈κ·K⌉`,
 * `s = min(sinks, K)`, `w = min(window, K − s)`, `n = ⌈max(0, b − s − w) / pageSize⌉`; the head
 * reads its first `s` and last `w` entries and the entries in `[s, K − w)` of the `n` pages (of
 * `pageSize` live entries) holding such entries with the highest Quest bound — over the group's
 * query heads, the largest `Σ_c max(q_c·max_c, q_c·min_c)` with the channel-wise key max / min
 * over the whole page (rounded to float32), ties to the older page — or everything when `n`
 * covers every such page.
 *
 * @param view the layer before the step (`keys` `[kvHeads, maxLive, headDim]`).
 * @param query the step's query after RoPE at this layer, `[queryHeads, headDim]`.
 * @returns per KV head, the sorted live indices read.
 */
export function tokenKeepByDefinition(
  view: LayerView,
  query: Float32Array,
  keepRate: number,
  anchors: ReferenceAnchors,
  pageSize: number,
): number[][] {
  const { kvHeads, liveCounts } = view;
  return Array.from({ length: kvHeads }, (_, h) => {
    const live = liveCounts[h]!;
    const all = Array.from({ length: live }, (_, i) => i);
    const s = Math.min(anchors.sinks, live);
    const w = Math.min(anchors.window, live - s);
    const b = Math.ceil(keepRate * live);
    const n = Math.ceil(Math.max(0, b - s - w) / pageSize);
    const candidates: number[] = [];
    for (let p = 0; p * pageSize < live; p++) {
      const holdsMiddle = all.some((i) => Math.floor(i / pageSize) === p && i >= s && i < live - w);
      if (holdsMiddle) candidates.push(p);
    }
    if (keepRate >= 1 || n >= candidates.length) return all;
    const score = (p: number): number =>
      Math.fround(pageBoundByDefinition(view, query, h, p, pageSize));
    const ranked = candidates
      .map((p) => ({ p, score: score(p) }))
      .sort((x, y) => y.score - x.score || x.p - y.p);
    const chosen = new Set(ranked.slice(0, n).map(({ p }) => p));
    return all.filter((i) => i < s || i >= live - w || chosen.has(Math.floor(i / pageSize)));
  });
}
