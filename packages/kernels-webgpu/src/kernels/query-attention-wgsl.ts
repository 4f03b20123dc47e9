import { POOL_SLOT_WGSL } from './pool-slot-wgsl';

/** Threads of one query-attention workgroup (one query head of one query token). */
export const QUERY_ATTENTION_THREADS = 64;

/**
 * WGSL of the pass that writes the attention probabilities policies observe: for each of `n`
 * queries and each query head, the softmax of `q·k·scale` over the live entries of the head's KV
 * head that the query sees (position ≤ the query's), with no bias — what `KVCache` computes for
 * observations (`LayerObservation.attention`, and each term of the accumulated attention).
 * Entries the query does not see, and a row that sees none, get 0.
 *
 * One workgroup per (query head, query): its threads score the entries in strides of
 * {@link QUERY_ATTENTION_THREADS} through the page table, writing the scores to `out`, then a
 * tree reduction gives the maximum; a second pass turns scores into `e^{s−max}` and sums them,
 * a third divides by the sum. `out` is `[n, queryHeads, rowStride]`; entries past a head's live
 * count are not written (a fresh buffer holds zeros there).
 *
 * Bindings: `queries` `[n, queryHeads, headDim]` from vec4 `params.queryOffset` (uploaded
 * queries, or a step's rows on the device); `info` the live count of each KV head, then the
 * `n` query positions; the pool's page table (the cache's rows from `tableBase`), keys and
 * positions.
 */
export function queryAttentionSource(group: number, hd4: number): string {
  return /* wgsl */ `
struct Params {
  queryHeads: u32,
  kvHeads: u32,
  pageSize: u32,
  tableStride: u32,
  rowStride: u32,
  scale: f32,
  tableBase: u32,
  queryOffset: u32,
}

const GROUP: u32 = ${group}u;
const HD4: u32 = ${hd4}u;
const THREADS: u32 = ${QUERY_ATTENTION_THREADS}u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> queries: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> info: array<i32>;
@group(0) @binding(3) var<storage, read> table: array<u32>;
@group(0) @binding(4) var<storage, read> keys: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> positions: array<i32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;

var<workgroup> reduce: array<f32, ${QUERY_ATTENTION_THREADS}>;

${POOL_SLOT_WGSL}

fn reduceMax(lane: u32, value: f32) -> f32 {
  reduce[lane] = value;
  workgroupBarrier();
  for (var width = THREADS / 2u; width > 0u; width = width / 2u) {
    if (lane < width) { reduce[lane] = max(reduce[lane], reduce[lane + width]); }
    workgroupBarrier();
  }
  let result = reduce[0];
  workgroupBarrier();
  return result;
}

fn reduceSum(lane: u32, value: f32) -> f32 {
  reduce[lane] = value;
  workgroupBarrier();
  for (var width = THREADS / 2u; width > 0u; width = width / 2u) {
    if (lane < width) { reduce[lane] = reduce[lane] + reduce[lane + width]; }
    workgroupBarrier();
  }
  let result = reduce[0];
  workgroupBarrier();
  return result;
}

@compute @workgroup_size(${QUERY_ATTENTION_THREADS})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let qh = wg.x;
  let k = wg.y;
  let h = qh / GROUP;
  let live = u32(info[h]);
  let position = info[params.kvHeads + k];
  let query = params.queryOffset + (k * params.queryHeads + qh) * HD4;
  let row = (k * params.queryHeads + qh) * params.rowStride;

  var best = -3.0e38;
  for (var i = lane; i < live; i = i + THREADS) {
    let slot = poolSlot(h, i);
    if (positions[slot] <= position) {
      var product = 0.0;
      for (var c = 0u; c < HD4; c = c + 1u) {
        product = product + dot(queries[query + c], keys[slot * HD4 + c]);
      }
      let score = product * params.scale;
      out[row + i] = score;
      best = max(best, score);
    }
  }
  let top = reduceMax(lane, best);
  var total = 0.0;
  for (var i = lane; i < live; i = i + THREADS) {
    if (positions[poolSlot(h, i)] <= position) {
      let weight = exp(out[row + i] - top);
      out[row + i] = weight;
      total = total + weight;
    }
  }
  let sum = reduceSum(lane, total);
  for (var i = lane; i < live; i = i + THREADS) {
    if (positions[poolSlot(h, i)] <= position) {
      out[row + i] = out[row + i] / sum;
    }
  }
}
`;
}
