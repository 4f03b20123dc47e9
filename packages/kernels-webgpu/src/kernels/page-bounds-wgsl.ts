/**
 * WGSL of the pass that recomputes Quest's page key bounds (`pageKeyBounds` of `@lethe/kv-cache`)
 * of some pages of a pool: for each listed `[page, entries]` pair, the channel-wise minimum and
 * maximum of the keys of the page's first `entries` slots (its live entries; `entries ≥ 1`) go
 * to `bounds[page]` — `[capacity, 2, hd4]` vec4s, the minimum then the maximum. One thread per
 * (listed page, vec4). Minima and maxima are exact, so a page's bounds equal the host's whatever
 * the order its entries are visited in.
 */
export function pageBoundsSource(): string {
  return /* wgsl */ `
struct Params {
  pages: u32,
  hd4: u32,
  pageSize: u32,
  unused: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> list: array<u32>;
@group(0) @binding(2) var<storage, read> keys: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> bounds: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  let item = index / params.hd4;
  let d = index % params.hd4;
  if (item >= params.pages) { return; }
  let page = list[2u * item];
  let entries = list[2u * item + 1u];
  let first = page * params.pageSize;
  var low = keys[first * params.hd4 + d];
  var high = low;
  for (var e = 1u; e < entries; e++) {
    let key = keys[(first + e) * params.hd4 + d];
    low = min(low, key);
    high = max(high, key);
  }
  bounds[(2u * page) * params.hd4 + d] = low;
  bounds[(2u * page + 1u) * params.hd4 + d] = high;
}
`;
}
