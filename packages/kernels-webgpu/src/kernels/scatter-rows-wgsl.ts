/**
 * WGSL of the pass that appends keys and values already on the device: for each move `[source,
 * slot]`, the `4·hd4` floats of a key row at vec4 `source` of `rows` (a step's rows) go to pool
 * slot `slot` of `keys`, and those of its value row, `valueShift` vec4s further, to `values`.
 * One thread per (move, vec4); copies are bits, so the pages hold exactly the rows.
 */
export function scatterRowsSource(): string {
  return /* wgsl */ `
struct Params {
  moves: u32,
  hd4: u32,
  valueShift: u32,
  unused: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> moves: array<u32>;
@group(0) @binding(2) var<storage, read> rows: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> keys: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> values: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  let entry = index / params.hd4;
  let d = index % params.hd4;
  if (entry >= params.moves) { return; }
  let source = moves[2u * entry];
  let slot = moves[2u * entry + 1u];
  keys[slot * params.hd4 + d] = rows[source + d];
  values[slot * params.hd4 + d] = rows[source + params.valueShift + d];
}
`;
}
