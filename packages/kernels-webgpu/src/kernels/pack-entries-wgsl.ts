import { POOL_SLOT_WGSL } from './pool-slot-wgsl';

/**
 * WGSL of the pass that packs one per-entry field of a layer's pool (`width` words per entry:
 * an accumulator, a position, a key row) into the `[kvHeads, rowStride, width]` layout of an
 * observation: thread `(h, i, c)` copies word `c` of live entry `i` of KV head `h`, found through
 * the page table; entries past a head's live count are not written (a fresh buffer holds zeros).
 * Words are copied as bits, so the pass is exact.
 *
 * Bindings: `live` the live count of each KV head; the page table (the cache's rows from
 * `tableBase`); the field; the output.
 */
export function packEntriesSource(): string {
  return /* wgsl */ `
struct Params {
  kvHeads: u32,
  pageSize: u32,
  tableStride: u32,
  rowStride: u32,
  width: u32,
  tableBase: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> live: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<storage, read> field: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;

${POOL_SLOT_WGSL}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  let c = index % params.width;
  let entry = index / params.width;
  let h = entry / params.rowStride;
  let i = entry % params.rowStride;
  if (h >= params.kvHeads || i >= live[h]) { return; }
  let slot = poolSlot(h, i);
  out[entry * params.width + c] = field[slot * params.width + c];
}
`;
}
