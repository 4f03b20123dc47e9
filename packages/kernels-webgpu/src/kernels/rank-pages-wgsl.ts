/** Plan words per ranked (sequence, KV head) (see {@link rankPagesSource}). */
export const RANK_WORDS = 9;

/** A ranked head's count slot that asks for no count. */
export const NO_COUNT = 0xffffffff;

/** 32-bit words of the ranking pass's uniform parameters. */
export const RANK_PARAM_WORDS = 8;

/**
 * WGSL of the pass that ranks pages for Quest-style reads (`TopPagesRead` of `@lethe/kv-cache`)
 * on the device and writes what each ranked (sequence, KV head) reads into the attention plan,
 * before the attention pass reads it. One workgroup per ranked head; its plan words are
 * `[headKey, sinks, middleEnd, live, pages, tableRow, queryRow, countSlot, sum]` (from
 * `params.rankingsOffset`): `headKey = sequence·kvHeads + h` its index in the plan's
 * per-(sequence, head) range list, `tableRow` its page-table row, `queryRow` the input row of
 * its token's query, `sum` 1 to combine a group's bounds by sum.
 *
 * 1. Each candidate page `c` (the pages `[⌊sinks/P⌋, ⌈middleEnd/P⌉)` that hold a middle entry)
 *    gets Quest's bound for each of the group's query heads, with the host's float32 arithmetic
 *    (`laneQuestScores`): four lane sums from +0 over the channels `≡ l (mod 4)` in increasing
 *    order of `q·max` where `q ≥ 0`, else `q·min`, then `(l0 + l2) + (l1 + l3)`; the group's heads
 *    combine in order by max, or by sum. Scores go to `scratch`.
 * 2. A page is chosen when fewer than `pages` candidates rank before it (a higher score, or an
 *    equal one on an older page): the host's `topKIndices` order.
 * 3. One thread writes the head's ranges in page order — the sinks, each chosen page's middle
 *    entries, the newest entries, adjacent ranges merged — as `[start, end, before]` triples
 *    into the slots the host reserved (at most `min(pages, candidates) + 2`), their count into the head's
 *    `[first, count]`, and, unless `countSlot` is `NO_COUNT`, the entries read into `counts`.
 */
export function rankPagesSource(group: number, hd4: number): string {
  return /* wgsl */ `
struct Params {
  rankingsOffset: u32,
  headRangesOffset: u32,
  rangesOffset: u32,
  pageSize: u32,
  tableStride: u32,
  maxCandidates: u32,
  queries: u32,
  kvHeads: u32,
}

const GROUP: u32 = ${group}u;
const HD4: u32 = ${hd4}u;
const THREADS: u32 = 64u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> inputs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> plan: array<u32>;
@group(0) @binding(3) var<storage, read> table: array<u32>;
@group(0) @binding(4) var<storage, read> bounds: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(6) var<storage, read_write> counts: array<u32>;

/** Quest's bound of pool page \`page\` for the group's query head \`g\`. */
fn headBound(firstQuery: u32, g: u32, page: u32) -> f32 {
  var lanes = vec4<f32>(0.0);
  for (var d = 0u; d < HD4; d++) {
    let q = inputs[firstQuery + g * HD4 + d];
    let low = bounds[(2u * page) * HD4 + d];
    let high = bounds[(2u * page + 1u) * HD4 + d];
    lanes += select(q * low, q * high, q >= vec4<f32>(0.0));
  }
  return (lanes.x + lanes.z) + (lanes.y + lanes.w);
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let at = params.rankingsOffset + wg.x * ${RANK_WORDS}u;
  let headKey = plan[at];
  let sinks = plan[at + 1u];
  let middleEnd = plan[at + 2u];
  let live = plan[at + 3u];
  let pages = plan[at + 4u];
  let tableRow = plan[at + 5u] * params.tableStride;
  let h = headKey % params.kvHeads;
  let firstQuery = params.queries + ((plan[at + 6u] * params.kvHeads + h) * GROUP) * HD4;
  let sum = plan[at + 8u] != 0u;
  let firstPage = sinks / params.pageSize;
  let endPage = (middleEnd + params.pageSize - 1u) / params.pageSize;
  let candidates = endPage - firstPage;
  let scores = 2u * wg.x * params.maxCandidates;
  let choices = scores + params.maxCandidates;

  for (var c = lane; c < candidates; c += THREADS) {
    let page = table[tableRow + firstPage + c];
    var combined = headBound(firstQuery, 0u, page);
    for (var g = 1u; g < GROUP; g++) {
      let bound = headBound(firstQuery, g, page);
      combined = select(max(combined, bound), combined + bound, sum);
    }
    scratch[scores + c] = combined;
  }
  storageBarrier();

  for (var c = lane; c < candidates; c += THREADS) {
    let score = scratch[scores + c];
    var rank = 0u;
    for (var other = 0u; other < candidates; other++) {
      let s = scratch[scores + other];
      rank += select(0u, 1u, s > score || (s == score && other < c));
    }
    scratch[choices + c] = select(0.0, 1.0, rank < pages);
  }
  storageBarrier();

  if (lane != 0u) { return; }
  let headAt = params.headRangesOffset + 2u * headKey;
  let first = params.rangesOffset + 3u * plan[headAt];
  // at most min(pages, candidates) + 2 triples, the slots the host reserved (a NaN score chooses no more)
  let most = min(pages, candidates) + 2u;
  var triples = 0u;
  var read = 0u;
  var picked = 0u;
  var pending = vec2<u32>(0u, 0u);
  // the ranges in order (sinks, chosen pages' middle entries, newest entries), then a flush
  for (var step = 0u; step <= candidates + 2u; step++) {
    var range = vec2<u32>(0u, 0u);
    if (step == 0u) {
      range = vec2<u32>(0u, sinks);
    } else if (step == candidates + 1u) {
      range = vec2<u32>(middleEnd, live);
    } else if (step <= candidates && scratch[choices + step - 1u] > 0.5 && picked < pages) {
      picked++;
      let page = firstPage + step - 1u;
      range = vec2<u32>(max(sinks, page * params.pageSize), min(middleEnd, (page + 1u) * params.pageSize));
    }
    let flush = step == candidates + 2u;
    if (!flush && range.x >= range.y) { continue; }
    if (!flush && pending.y > pending.x && pending.y == range.x) {
      pending.y = range.y;
      continue;
    }
    if (pending.y > pending.x && triples < most) {
      let t = first + 3u * triples;
      plan[t] = pending.x;
      plan[t + 1u] = pending.y;
      plan[t + 2u] = read;
      read += pending.y - pending.x;
      triples++;
    }
    pending = range;
  }
  plan[headAt + 1u] = triples;
  let countSlot = plan[at + 7u];
  if (countSlot != ${NO_COUNT}u) { counts[countSlot] = read; }
}
`;
}
