import { POOL_SLOT_WGSL } from './pool-slot-wgsl';

/**
 * WGSL of the pass that folds the attention of `n` new queries into each live entry's running
 * sums (H2O's accumulation, `KVCache.recordQueries` with `trackAttention`): one thread per
 * (KV head `h`, live entry `i`) adds to the entry's slot the probabilities
 * ({@link queryAttentionSource}'s `[n, queryHeads, rowStride]`) of every query head of `h`'s group
 * over every query that sees it, and one count per such query. Each slot has one thread, so the
 * sums need no atomics; the pool's accumulators move with their entries at compaction.
 *
 * Bindings: `info` the live count of each KV head, then the `n` query positions; the pool's page
 * table (the cache's rows from `tableBase`), positions, accumulated attention and counts (float32: counts stay exact below 2²⁴).
 */
export function accumulateAttentionSource(group: number): string {
  return /* wgsl */ `
struct Params {
  queries: u32,
  queryHeads: u32,
  kvHeads: u32,
  pageSize: u32,
  tableStride: u32,
  rowStride: u32,
  tableBase: u32,
}

const GROUP: u32 = ${group}u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> info: array<i32>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<storage, read> positions: array<i32>;
@group(0) @binding(4) var<storage, read> probabilities: array<f32>;
@group(0) @binding(5) var<storage, read_write> attention: array<f32>;
@group(0) @binding(6) var<storage, read_write> counts: array<f32>;

${POOL_SLOT_WGSL}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  let h = index / params.rowStride;
  let i = index % params.rowStride;
  if (h >= params.kvHeads || i >= u32(info[h])) { return; }
  let slot = poolSlot(h, i);
  let position = positions[slot];
  var added = 0.0;
  var seen = 0.0;
  for (var k = 0u; k < params.queries; k = k + 1u) {
    if (position <= info[params.kvHeads + k]) {
      var summed = 0.0;
      for (var g = 0u; g < GROUP; g = g + 1u) {
        summed = summed + probabilities[(k * params.queryHeads + h * GROUP + g) * params.rowStride + i];
      }
      added = added + summed;
      seen = seen + 1.0;
    }
  }
  attention[slot] = attention[slot] + added;
  counts[slot] = counts[slot] + seen;
}
`;
}
