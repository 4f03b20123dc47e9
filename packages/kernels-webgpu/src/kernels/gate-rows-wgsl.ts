import { NON_FINITE } from './rope-rows-wgsl';

/**
 * WGSL of the pass that puts a layer's gates (a gate hook's, GSA's) where a step's attention and
 * appends read them: `source` holds the log-gates `[N, kvHeads]`, then the gates `[N, kvHeads]`
 * (`exp` of them, as the caller computed it); the log-gates go to the rows' gate section (from
 * float `params.logGates` of `rows`: the bias the attention adds to a token's own key), the gates'
 * bits to the step's report (from word `params.gates` of `report`), and a gate that is NaN or
 * ±∞ sets {@link NON_FINITE}'s bits in its row's word (from word `params.gateFlags`), so a step
 * can refuse it without reading the gates first. A log-gate of −∞ (a gate of 0) is a gate, not an
 * error. One thread per (row, KV head).
 */
export function gateRowsSource(): string {
  return /* wgsl */ `
struct Params {
  tokens: u32,
  kvHeads: u32,
  logGates: u32,
  gates: u32,
  gateFlags: u32,
  unused1: u32,
  unused2: u32,
  unused3: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> source: array<f32>;
@group(0) @binding(2) var<storage, read_write> rows: array<f32>;
@group(0) @binding(3) var<storage, read_write> report: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let index = id.x + id.y * groups.x * 64u;
  let count = params.tokens * params.kvHeads;
  if (index >= count) { return; }
  rows[params.logGates + index] = source[index];
  let bits = bitcast<u32>(source[count + index]);
  atomicStore(&report[params.gates + index], bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) {
    let infinite = select(${NON_FINITE.positive}u, ${NON_FINITE.negative}u, (bits & 0x80000000u) != 0u);
    let flag = select(infinite, ${NON_FINITE.nan}u, (bits & 0x007fffffu) != 0u);
    atomicOr(&report[params.gateFlags + index / params.kvHeads], flag);
  }
}
`;
}
