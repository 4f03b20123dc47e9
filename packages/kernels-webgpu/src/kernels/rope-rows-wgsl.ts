/** 32-bit words of the RoPE-rows pass's uniform parameters. */
export const ROPE_PARAM_WORDS = 8;

/**
 * WGSL of the pass that turns a layer's fused q/k/v projection into the rows the paged attention
 * reads: the projection is `[(queryHeads + 2·kvHeads)·headDim, N]` columns (tfjs's `W·xᵀ`, the
 * query heads' channels, then the keys', then the values'), the output block, from float
 * `offset` of `rows`, is `[N, queryHeads, headDim]` queries, `[N, kvHeads, headDim]` keys and
 * `[N, kvHeads, headDim]` values, row `n` being token `n`. Queries and keys are rotated (RoPE,
 * HF's `rotate_half`: `x₁·cos − x₂·sin`, `x₂·cos + x₁·sin` over the two halves of a head),
 * values copied. One thread per (token, head, channel pair); `rotation` holds `cos` `[N, half]`
 * then `sin` `[N, half]`, computed by the caller, so the angles are the host's bit for bit.
 */
export function ropeRowsSource(): string {
  return /* wgsl */ `
struct Params {
  tokens: u32,
  queryHeads: u32,
  kvHeads: u32,
  half: u32,
  offset: u32,
  unused0: u32,
  unused1: u32,
  unused2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> columns: array<f32>;
@group(0) @binding(2) var<storage, read> rotation: array<f32>;
@group(0) @binding(3) var<storage, read_write> rows: array<f32>;

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
  var sectionHeads = params.queryHeads;
  var head = h;
  if (h >= params.queryHeads) {
    base += tokens * params.queryHeads * headDim;
    sectionHeads = params.kvHeads;
    head = h - params.queryHeads;
    if (head >= params.kvHeads) {
      base += tokens * params.kvHeads * headDim;
      head -= params.kvHeads;
    }
  }
  let out = base + (n * sectionHeads + head) * headDim + i;
  if (h < params.queryHeads + params.kvHeads) {
    let c = rotation[n * half + i];
    let s = rotation[(tokens + n) * half + i];
    rows[out] = first * c + (-second) * s;
    rows[out + half] = second * c + first * s;
  } else {
    rows[out] = first;
    rows[out + half] = second;
  }
}
`;
}
