/**
 * WGSL of the pass that moves cache entries between slots of one layer's pool: for every move
 * `[from, to]`, the key and value rows (`headDim` floats each), the position and, with
 * `gated`, the gate and, with `tracked`, the accumulated attention and its count of slot `from`
 * are copied to slot `to`. A compaction after `keep` moves the
 * survivors into fresh pages, so no slot is both read and written by one pass. Words are copied
 * as bits (`u32`), so the pass is exact.
 */
export function moveEntriesSource(gated: boolean, tracked: boolean): string {
  return /* wgsl */ `
struct Params {
  moves: u32,
  headDim: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> moves: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> values: array<u32>;
@group(0) @binding(4) var<storage, read_write> positions: array<u32>;
${gated ? '@group(0) @binding(5) var<storage, read_write> gates: array<u32>;' : ''}
${tracked ? '@group(0) @binding(6) var<storage, read_write> attention: array<u32>;' : ''}
${tracked ? '@group(0) @binding(7) var<storage, read_write> counts: array<u32>;' : ''}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  if (index >= params.moves * params.headDim) { return; }
  let pair = moves[index / params.headDim];
  let c = index % params.headDim;
  keys[pair.y * params.headDim + c] = keys[pair.x * params.headDim + c];
  values[pair.y * params.headDim + c] = values[pair.x * params.headDim + c];
  if (c == 0u) {
    positions[pair.y] = positions[pair.x];
    ${gated ? 'gates[pair.y] = gates[pair.x];' : ''}
    ${tracked ? 'attention[pair.y] = attention[pair.x];' : ''}
    ${tracked ? 'counts[pair.y] = counts[pair.x];' : ''}
  }
}
`;
}
