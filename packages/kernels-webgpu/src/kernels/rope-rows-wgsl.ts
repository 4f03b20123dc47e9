/** 32-bit words of the RoPE-rows pass's uniform parameters. */
export const ROPE_PARAM_WORDS = 8;

/** Bits the RoPE-rows pass sets in a row's flag word for a non-finite value it read or wrote. */
export const NON_FINITE = { nan: 1, positive: 2, negative: 4 } as const;

/**
 * WGSL of the pass that turns a layer's fused q/k/v projection into the rows the paged attention
 * reads: the projection is `[(queryHeads + 2·kvHeads)·headDim, N]` columns (tfjs's `W·xᵀ`, the
 * query heads' channels, then the keys', then the values'), the output block, from float
 * `offset` of `rows`, is `[N, queryHeads, headDim]` queries, `[N, kvHeads, headDim]` keys and
 * `[N, kvHeads, headDim]` values, row `n` being token `n`. Queries and keys are rotated (RoPE,
 * HF's `rotate_half`: `x₁·cos − x₂·sin`, `x₂·cos + x₁·sin` over the two halves of a head),
 * values copied. One thread per (token, head, channel pair); `rotation` holds `cos` `[N, half]`
 * then `sin` `[N, half]`, computed by the caller, so the angles are the host's bit for bit.
 * Every value read or written is checked by its bits (WGSL promises nothing of NaN arithmetic):
 * a NaN, +∞ or −∞ sets {@link NON_FINITE}'s bit in `flags[(layer·3 + section)·N + n]` (sections:
 * queries, keys, values), so a step can refuse non-finite keys without reading them back.
 */
export function ropeRowsSource(): string {
  return /* wgsl */ `
struct Params {
  tokens: u32,
  queryHeads: u32,
  kvHeads: u32,
  half: u32,
  offset: u32,
  layer: u32,
  unused1: u32,
  unused2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> columns: array<f32>;
@group(0) @binding(2) var<storage, read> rotation: array<f32>;
@group(0) @binding(3) var<storage, read_write> rows: array<f32>;
@group(0) @binding(4) var<storage, read_write> flags: array<atomic<u32>>;

/** The flag bits of \`x\`: 0 when it is finite. */
fn nonFinite(x: f32) -> u32 {
  let bits = bitcast<u32>(x);
  if ((bits & 0x7f800000u) != 0x7f800000u) { return 0u; }
  if ((bits & 0x007fffffu) != 0u) { return ${NON_FINITE.nan}u; }
  return select(${NON_FINITE.positive}u, ${NON_FINITE.negative}u, (bits & 0x80000000u) != 0u);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  let heads = params.queryHeads + 2u * params.kvHeads;
  let half = params.half;
  let tokens = params.tokens;
  if (index >= tokens * heads * half) { return; }
  let i = index % half;
  let h = (index / half) % heads;
  let n = index / (half * heads);
  let headDim = 2u * half;
  let first = columns[(h * headDim + i) * tokens + n];
  let second = columns[(h * headDim + half + i) * tokens + n];
  // the section (queries, keys, values) of head h and its place in it
  var base = params.offset;
  var section = 0u;
  var sectionHeads = params.queryHeads;
  var head = h;
  if (h >= params.queryHeads) {
    base += tokens * params.queryHeads * headDim;
    section = 1u;
    sectionHeads = params.kvHeads;
    head = h - params.queryHeads;
    if (head >= params.kvHeads) {
      base += tokens * params.kvHeads * headDim;
      section = 2u;
      head -= params.kvHeads;
    }
  }
  let out = base + (n * sectionHeads + head) * headDim + i;
  var low = first;
  var high = second;
  if (section < 2u) {
    let c = rotation[n * half + i];
    let s = rotation[(tokens + n) * half + i];
    low = first * c + (-second) * s;
    high = second * c + first * s;
  }
  rows[out] = low;
  rows[out + half] = high;
  let bad = nonFinite(first) | nonFinite(second) | nonFinite(low) | nonFinite(high);
  if (bad != 0u) {
    atomicOr(&flags[(params.layer * 3u + section) * tokens + n], bad);
  }
}
`;
}
