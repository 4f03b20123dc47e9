import { LetheError } from '@lethe/core';
import type { CacheGeometry } from '@lethe/kv-cache';
import type { PoolBuffers } from '../cache/page-pool';
import { countDispatches } from '../device/counters';
import { createGpuBuffer, destroyGpuBuffer } from '../device/gpu-buffers';
import { Usage } from '../device/usage';
import { writeArray } from '../device/write-array';
import {
  ATTENTION_FLAGS,
  ATTENTION_PARAM_WORDS,
  attentionCombineSource,
  pagedAttentionSource,
  SPLIT_ENTRIES,
} from '../kernels/paged-attention-wgsl';
import { computePipeline } from '../kernels/pipelines';
import { RANK_PARAM_WORDS, rankPagesSource } from '../kernels/rank-pages-wgsl';
import { workgroupGrid } from '../kernels/workgroup-grid';
import type { AttentionPlan } from './attention-plan';

const STORAGE_IN = Usage.STORAGE | Usage.COPY_DST;
const UNIFORM_IN = Usage.UNIFORM | Usage.COPY_DST;

/**
 * Queries and chunk keys and values already on the device: `[rows, queryHeads, headDim]` queries,
 * then `[rows, kvHeads, headDim]` keys and values, from float `offset` of `buffer` (a multiple of 4).
 */
export interface DeviceInputs {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly rows: number;
}

/** One layer's attention pass over one or more sequences of a pool: the pool and the queries. */
export interface PagedAttentionPass {
  readonly device: GPUDevice;
  readonly geometry: CacheGeometry;
  readonly queryHeads: number;
  readonly pool: PoolBuffers;
  readonly tableStride: number;
  readonly plan: AttentionPlan;
  /**
   * `[T, queryHeads, headDim]` queries after RoPE (every sequence's tokens, in plan order), then,
   * when the chunks' own tokens are read, their keys and values `[T, kvHeads, headDim]` each,
   * uploaded for the pass; or the same layout already on the device, each sequence's tokens from
   * its input row on.
   */
  readonly inputs: Float32Array | DeviceInputs;
  /** Whether the chunks' keys and values follow the queries in `inputs` (read causally). */
  readonly chunk: boolean;
  /** Where ranked heads write the entries they read (their plan's count slots), if anywhere. */
  readonly counts?: GPUBuffer;
  /**
   * The float offset in the device inputs of the `[rows, kvHeads]` bias of the chunks' tokens (a
   * step's rows' log-gates), read instead of a plan's chunk bias.
   */
  readonly chunkBiasInputs?: number;
}

/**
 * Records and submits the dispatches of a paged attention — the ranking of pages when the plan
 * ranks heads (`rankPagesSource`, on the pool's page bounds), the split pass, then the merge of
 * the splits — and returns the output `[T, queryHeads, headDim]` in a new buffer (usage storage,
 * copy source and destination: tfjs makes a tensor of it by copying it into a buffer of the same usage) that the caller destroys.
 */
export function runPagedAttention(pass: PagedAttentionPass): GPUBuffer {
  const { device, geometry, queryHeads, pool, plan } = pass;
  const tokens = plan.tokens;
  const { kvHeads, headDim, pageSize } = geometry;
  const group = queryHeads / kvHeads;
  const hd4 = headDim / 4;
  const read = plan.maxRead + (pass.chunk ? plan.maxTokens : 0);
  const splits = Math.max(1, Math.ceil(read / SPLIT_ENTRIES));
  const rows = tokens * queryHeads;
  const gated = pool.gates !== undefined;

  const params = new Uint32Array(ATTENTION_PARAM_WORDS);
  const inputRows = pass.inputs instanceof Float32Array ? tokens : pass.inputs.rows;
  const queryStart = pass.inputs instanceof Float32Array ? 0 : pass.inputs.offset / 4;
  const queryVec4s = (inputRows * queryHeads * headDim) / 4;
  const chunkVec4s = (inputRows * kvHeads * headDim) / 4;
  params.set([
    tokens,
    queryHeads,
    kvHeads,
    pageSize,
    splits,
    pass.tableStride,
    plan.sequenceOffset,
    plan.headRangesOffset,
    plan.rangesOffset,
    plan.chunkBiasOffset,
    queryStart + queryVec4s,
    queryStart + queryVec4s + chunkVec4s,
    (plan.chunkBiasOffset > 0 ? ATTENTION_FLAGS.chunkBias : 0) |
      (pass.chunk ? ATTENTION_FLAGS.chunk : 0) |
      (pass.chunkBiasInputs === undefined ? 0 : ATTENTION_FLAGS.chunkBiasInputs),
    queryStart,
    pass.chunkBiasInputs ?? 0,
  ]);
  new Float32Array(params.buffer)[ATTENTION_PARAM_WORDS - 1] = Math.fround(1 / Math.sqrt(headDim));
  const temporaries = [
    createGpuBuffer(device, params.byteLength, UNIFORM_IN, 'attention parameters'),
    createGpuBuffer(device, plan.words.byteLength, STORAGE_IN, 'attention plan'),
    createGpuBuffer(device, 16 * rows * splits * (hd4 + 1), Usage.STORAGE, 'partials'),
    createGpuBuffer(device, 8, UNIFORM_IN, 'merge parameters'),
  ];
  const [uniform, planBuffer, partials, mergeParams] = temporaries as [
    GPUBuffer,
    GPUBuffer,
    GPUBuffer,
    GPUBuffer,
  ];
  let inputs: GPUBuffer;
  if (pass.inputs instanceof Float32Array) {
    inputs = createGpuBuffer(device, pass.inputs.byteLength, STORAGE_IN, 'queries and chunk');
    temporaries.push(inputs);
    writeArray(device, inputs, 0, pass.inputs);
  } else {
    inputs = pass.inputs.buffer;
  }
  const output = createGpuBuffer(
    device,
    4 * rows * headDim,
    Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST,
    'attention output',
  );
  writeArray(device, uniform, 0, params);
  writeArray(device, planBuffer, 0, plan.words.subarray(0, plan.uploadWords));
  writeArray(device, mergeParams, 0, Uint32Array.of(rows, splits));

  const attend = computePipeline(
    device,
    'paged attention',
    pagedAttentionSource(group, hd4, gated),
  );
  const bind = (binding: number, buffer: GPUBuffer): GPUBindGroupEntry => ({
    binding,
    resource: { buffer },
  });
  const attendEntries = [
    bind(0, uniform),
    bind(1, inputs),
    bind(2, planBuffer),
    bind(3, pool.table),
    bind(4, pool.keys),
    bind(5, pool.values),
    bind(6, pool.positions),
    bind(7, partials),
  ];
  if (pool.gates !== undefined) attendEntries.push(bind(8, pool.gates));
  const merge = computePipeline(device, 'attention merge', attentionCombineSource(hd4));

  const encoder = device.createCommandEncoder({ label: 'paged attention' });
  const compute = encoder.beginComputePass();
  if (plan.rankings > 0) {
    temporaries.push(...recordRanking(compute, pass, inputs, planBuffer, queryStart));
  }
  compute.setPipeline(attend);
  compute.setBindGroup(
    0,
    device.createBindGroup({ layout: attend.getBindGroupLayout(0), entries: attendEntries }),
  );
  compute.dispatchWorkgroups(splits, kvHeads, tokens);
  compute.setPipeline(merge);
  compute.setBindGroup(
    0,
    device.createBindGroup({
      layout: merge.getBindGroupLayout(0),
      entries: [bind(0, mergeParams), bind(1, partials), bind(2, output)],
    }),
  );
  const [x, y] = workgroupGrid(device, Math.ceil((rows * hd4) / 64));
  compute.dispatchWorkgroups(x, y);
  compute.end();
  device.queue.submit([encoder.finish()]);
  countDispatches(plan.rankings > 0 ? 3 : 2);
  for (const buffer of temporaries) destroyGpuBuffer(buffer);
  return output;
}

/**
 * Records the ranking dispatch of `pass` (one workgroup per ranked head) into `compute`, before
 * the attention reads the ranges it writes into the plan; returns the buffers it made.
 */
function recordRanking(
  compute: GPUComputePassEncoder,
  pass: PagedAttentionPass,
  inputs: GPUBuffer,
  planBuffer: GPUBuffer,
  queryStart: number,
): GPUBuffer[] {
  const { device, geometry, queryHeads, pool, plan } = pass;
  const { kvHeads, headDim, pageSize } = geometry;
  if (pool.bounds === undefined) {
    throw new LetheError('E_STATE', 'the pool keeps no page bounds to rank pages by', 'pageBounds');
  }
  const params = Uint32Array.of(
    plan.rankingsOffset,
    plan.headRangesOffset,
    plan.rangesOffset,
    pageSize,
    pass.tableStride,
    plan.maxCandidates,
    queryStart,
    kvHeads,
  );
  const made = [
    createGpuBuffer(device, 4 * RANK_PARAM_WORDS, UNIFORM_IN, 'ranking parameters'),
    createGpuBuffer(
      device,
      8 * Math.max(1, plan.rankings * plan.maxCandidates),
      Usage.STORAGE,
      'page scores',
    ),
  ];
  const [uniform, scratch] = made as [GPUBuffer, GPUBuffer];
  let counts = pass.counts;
  if (counts === undefined) {
    counts = createGpuBuffer(device, 4, Usage.STORAGE, 'no read counts');
    made.push(counts);
  }
  writeArray(device, uniform, 0, params);
  const pipeline = computePipeline(
    device,
    'rank pages',
    rankPagesSource(queryHeads / kvHeads, headDim / 4),
  );
  const buffers = [uniform, inputs, planBuffer, pool.table, pool.bounds, scratch, counts];
  compute.setPipeline(pipeline);
  compute.setBindGroup(
    0,
    device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    }),
  );
  compute.dispatchWorkgroups(plan.rankings);
  return made;
}
