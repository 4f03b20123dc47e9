/** Threads of one attention workgroup. */
export const ATTENTION_THREADS = 64;

/** Read entries one attention workgroup covers (one split of a head's read, flash-decoding style). */
export const SPLIT_ENTRIES = 128;

/** 32-bit words of the attention pass's uniform parameters. */
export const ATTENTION_PARAM_WORDS = 16;

/** A logit no visible entry reaches: masked entries get it, exp(it − max) underflows to 0. */
export const MASKED_LOGIT = -3.0e38;

/**
 * Flag bits of the attention pass: a per-chunk-token bias from the plan, the chunks' tokens read,
 * a per-chunk-token bias from the inputs (a step's rows' log-gates).
 */
export const ATTENTION_FLAGS = { chunkBias: 1, chunk: 2, chunkBiasInputs: 4 } as const;

/**
 * Plan words per sequence: table base, first token, tokens, bias offset, bias stride, input row
 * (the row of its first token in the queries and chunk keys and values the pass reads).
 */
export const SEQUENCE_WORDS = 6;

/** The gated pass's read of an entry's gate: a gate of 0 masks the entry, others add log g. */
const GATE_READ = `let gate = gates[entry];
        visible = visible && gate > 0.0;
        shift += log(max(gate, 1e-38));`;

/**
 * WGSL of the paged attention pass for one query group of `group` heads over `headDim = 4·hd4`
 * channels, over one or more sequences whose caches share a page pool (a batch attends in one
 * launch). One workgroup per (split, KV head, query token) covers `SPLIT_ENTRIES` entries of
 * the token's sequence's read list for the head — the cache entries it reads through the page
 * table (all live pages, or the ranges a read selector chose), then the sequence's chunk tokens —
 * scores them against the group's queries (`q·k·scale` plus the optional bias per live entry,
 * the `log` of a stored gate and the chunk token's bias; a cache entry after the query's position
 * is masked, chunk token `u` of the sequence is seen by its query token `t ≥ u`), and writes, per
 * query head, the split's unnormalised output `Σ e^{s−m}·v`, its maximum `m` and sum `Σ e^{s−m}`
 * for {@link attentionCombineSource}. Splits past a sequence's read write `m = MASKED, l = 0`.
 *
 * Bindings: `inputs` holds the queries `[rows, queryHeads, headDim]`, then the chunks' keys and
 * values `[rows, kvHeads, headDim]` each (at the vec4 offsets `params` gives; a sequence's tokens
 * are the rows from its input row on: the uploaded inputs of one launch, or a step's rows of
 * every layer on the device, which the RoPE-rows pass wrote); the
 * page table is `[rows, tableStride]` (the page of live entry `i` of head `h` of a sequence whose
 * table base is `b` is `table[(b + h)·tableStride + ⌊i / pageSize⌋]`, its slot
 * `page·pageSize + i mod pageSize`); the plan (`attentionPlan`) holds the query positions `[T]`,
 * each token's sequence `[T]`, per sequence `[tableBase, firstToken, tokens, biasOffset,
 * biasStride, inputRow]`, per (sequence, head) `[first, count]` of its ranges in the range list, the range
 * list (triples `[start, end, before]`, `before`: read entries in the head's earlier ranges) and,
 * as float bits, the live biases and the chunk bias `[T, kvHeads]` — or, for a step's rows with
 * gates, the chunk bias is their log-gates `[rows, kvHeads]` in `inputs` from float
 * `params.chunkBiasInputs`. With `gated`, the pool's
 * gates are bound too: at most 8 storage buffers, WebGPU's default per-stage limit.
 */
export function pagedAttentionSource(group: number, hd4: number, gated: boolean): string {
  return /* wgsl */ `
struct Params {
  tokens: u32,
  queryHeads: u32,
  kvHeads: u32,
  pageSize: u32,
  splits: u32,
  tableStride: u32,
  sequenceOffset: u32,
  headRangesOffset: u32,
  rangesOffset: u32,
  chunkBiasOffset: u32,
  chunkKeys: u32,
  chunkValues: u32,
  flags: u32,
  queries: u32,
  chunkBiasInputs: u32,
  scale: f32,
}

const GROUP: u32 = ${group}u;
const HD4: u32 = ${hd4}u;
const SPLIT: u32 = ${SPLIT_ENTRIES}u;
const THREADS: u32 = ${ATTENTION_THREADS}u;
const MASKED: f32 = ${MASKED_LOGIT.toExponential()};
const CHUNK_BIAS: u32 = ${ATTENTION_FLAGS.chunkBias}u;
const CHUNKS: u32 = ${ATTENTION_FLAGS.chunk}u;
const CHUNK_BIAS_INPUTS: u32 = ${ATTENTION_FLAGS.chunkBiasInputs}u;
const CHUNK: u32 = 0x80000000u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> inputs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> plan: array<u32>;
@group(0) @binding(3) var<storage, read> table: array<u32>;
@group(0) @binding(4) var<storage, read> keys: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> values: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> positions: array<i32>;
@group(0) @binding(7) var<storage, read_write> partials: array<vec4<f32>>;
${gated ? '@group(0) @binding(8) var<storage, read> gates: array<f32>;' : ''}

var<workgroup> groupQueries: array<vec4<f32>, GROUP * HD4>;
var<workgroup> scores: array<f32, GROUP * SPLIT>;
// a pool slot, or CHUNK | r for the chunk token in input row r
var<workgroup> entries: array<u32, SPLIT>;

/** Live index of the \`r\`-th cache read of (sequence, head) \`head\`: a binary search over its ranges. */
fn liveIndex(head: u32, r: u32) -> u32 {
  let first = plan[params.headRangesOffset + 2u * head];
  let count = plan[params.headRangesOffset + 2u * head + 1u];
  var lo = 0u;
  var hi = count;
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (plan[params.rangesOffset + 3u * (first + mid) + 2u] <= r) { lo = mid; } else { hi = mid; }
  }
  let at = params.rangesOffset + 3u * (first + lo);
  return plan[at] + (r - plan[at + 2u]);
}

/** Cache entries (sequence, head) \`head\` reads: \`before + (end − start)\` of its last range. */
fn cacheReads(head: u32) -> u32 {
  let first = plan[params.headRangesOffset + 2u * head];
  let count = plan[params.headRangesOffset + 2u * head + 1u];
  if (count == 0u) { return 0u; }
  let at = params.rangesOffset + 3u * (first + count - 1u);
  return plan[at + 2u] + plan[at + 1u] - plan[at];
}

/** Lane \`d\` of an entry's key. */
fn keyOf(entry: u32, head: u32, d: u32) -> vec4<f32> {
  if ((entry & CHUNK) != 0u) {
    return inputs[params.chunkKeys + ((entry & ~CHUNK) * params.kvHeads + head) * HD4 + d];
  }
  return keys[entry * HD4 + d];
}

/** Lane \`d\` of an entry's value. */
fn valueOf(entry: u32, head: u32, d: u32) -> vec4<f32> {
  if ((entry & CHUNK) != 0u) {
    return inputs[params.chunkValues + ((entry & ~CHUNK) * params.kvHeads + head) * HD4 + d];
  }
  return values[entry * HD4 + d];
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
  let split = wg.x;
  let head = wg.y;
  let token = wg.z;
  let queryPosition = bitcast<i32>(plan[token]);
  let sequence = plan[params.tokens + token];
  let info = params.sequenceOffset + ${SEQUENCE_WORDS}u * sequence;
  let tableRow = (plan[info] + head) * params.tableStride;
  let firstToken = plan[info + 1u];
  // the input row of the sequence's token u is u + rowShift (u32 arithmetic wraps)
  let rowShift = plan[info + 5u] - firstToken;
  let firstQuery = params.queries + ((token + rowShift) * params.queryHeads + head * GROUP) * HD4;
  for (var j = lane; j < GROUP * HD4; j += THREADS) {
    groupQueries[j] = inputs[firstQuery + j];
  }
  let chunkTokens = select(0u, plan[info + 2u], (params.flags & CHUNKS) != 0u);
  let biasAt = plan[info + 3u] + head * plan[info + 4u];
  let headKey = sequence * params.kvHeads + head;
  let cached = cacheReads(headKey);
  let count = cached + chunkTokens;
  let first = split * SPLIT;
  let covered = select(0u, min(SPLIT, count - first), first < count);
  workgroupBarrier();

  for (var e = lane; e < SPLIT; e += THREADS) {
    var visible = false;
    var shift = 0.0;
    var entry = 0u;
    if (e < covered) {
      let r = first + e;
      if (r < cached) {
        let live = liveIndex(headKey, r);
        let page = table[tableRow + live / params.pageSize];
        entry = page * params.pageSize + live % params.pageSize;
        visible = positions[entry] <= queryPosition;
        if (plan[info + 4u] > 0u) {
          shift += bitcast<f32>(plan[biasAt + live]);
        }
        ${gated ? GATE_READ : ''}
      } else {
        let u = firstToken + r - cached;
        entry = CHUNK | (u + rowShift);
        visible = u <= token;
        if ((params.flags & CHUNK_BIAS) != 0u) {
          shift += bitcast<f32>(plan[params.chunkBiasOffset + u * params.kvHeads + head]);
        }
        if ((params.flags & CHUNK_BIAS_INPUTS) != 0u) {
          let at = params.chunkBiasInputs + (u + rowShift) * params.kvHeads + head;
          shift += inputs[at / 4u][at % 4u];
        }
      }
    }
    entries[e] = entry;
    for (var g = 0u; g < GROUP; g++) {
      var score = 0.0;
      if (visible) {
        for (var d = 0u; d < HD4; d++) {
          score += dot(groupQueries[g * HD4 + d], keyOf(entry, head, d));
        }
      }
      scores[g * SPLIT + e] = select(MASKED, score * params.scale + shift, visible);
    }
  }
  workgroupBarrier();

  // each query head's maximum and sum over the split; the scores become the weights e^{s−m}
  let stride = HD4 + 1u;
  if (lane < GROUP) {
    var m = MASKED;
    for (var e = 0u; e < covered; e++) { m = max(m, scores[lane * SPLIT + e]); }
    var l = 0.0;
    for (var e = 0u; e < covered; e++) {
      let s = scores[lane * SPLIT + e];
      let w = select(0.0, exp(s - m), s > MASKED);
      scores[lane * SPLIT + e] = w;
      l += w;
    }
    let out = ((token * params.queryHeads + head * GROUP + lane) * params.splits + split) * stride;
    partials[out + HD4] = vec4<f32>(m, l, 0.0, 0.0);
  }
  workgroupBarrier();

  for (var j = lane; j < GROUP * HD4; j += THREADS) {
    let g = j / HD4;
    let d = j % HD4;
    var acc = vec4<f32>(0.0);
    for (var e = 0u; e < covered; e++) {
      acc += scores[g * SPLIT + e] * valueOf(entries[e], head, d);
    }
    let out = ((token * params.queryHeads + head * GROUP + g) * params.splits + split) * stride;
    partials[out + d] = acc;
  }
}
`;
}

/**
 * WGSL of the pass that merges the splits of {@link pagedAttentionSource}: per query token,
 * query head and 4-channel lane, `Σₛ e^{mₛ−M}·accₛ / Σₛ e^{mₛ−M}·lₛ` with `M = maxₛ mₛ`
 * (0 where the query sees no entry).
 */
export function attentionCombineSource(hd4: number): string {
  return /* wgsl */ `
struct Params {
  rows: u32,
  splits: u32,
}

const HD4: u32 = ${hd4}u;
const MASKED: f32 = ${MASKED_LOGIT.toExponential()};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partials: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> output: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  if (index >= params.rows * HD4) { return; }
  let row = index / HD4;
  let d = index % HD4;
  let stride = HD4 + 1u;
  let first = row * params.splits;
  var m = MASKED;
  for (var s = 0u; s < params.splits; s++) { m = max(m, partials[(first + s) * stride + HD4].x); }
  var sum = 0.0;
  var acc = vec4<f32>(0.0);
  if (m > MASKED) {
    for (var s = 0u; s < params.splits; s++) {
      let stats = partials[(first + s) * stride + HD4];
      if (stats.y > 0.0) {
        let factor = exp(stats.x - m);
        sum += factor * stats.y;
        acc += factor * partials[(first + s) * stride + d];
      }
    }
  }
  output[index] = select(vec4<f32>(0.0), acc / sum, sum > 0.0);
}
`;
}
