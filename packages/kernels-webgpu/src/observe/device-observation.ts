import type { QueryRun } from '../cache/device-query-window';
import { readBackParts } from '../device/read-back';
import { Usage } from '../device/usage';
import { type LayerPass, PassBuffers } from './layer-pass';
import { encodePackEntries } from './pack-entries';
import { encodeQueryAttention } from './query-attention';

/** Queries kept on the device: `runs` of `buffer` (a query window's ring), oldest first. */
export interface QueryRuns {
  readonly buffer: GPUBuffer;
  readonly runs: readonly QueryRun[];
}

/** What one observation asks of the device. */
export interface DeviceObservationRequest {
  /** `[kvHeads]` live entries per KV head. */
  readonly live: Int32Array;
  /** Row stride of the per-entry arrays (`max(live)`). */
  readonly maxLive: number;
  /**
   * The recent queries whose attention the policy reads (`[n, queryHeads, headDim]`, from the
   * host or on the device), if any.
   */
  readonly window?: { readonly queries: Float32Array | QueryRuns; readonly positions: Int32Array };
  /** Whether to read the accumulated attention and its counts. */
  readonly accumulated: boolean;
  /** The live entries' keys and values (`[kvHeads, maxLive, headDim]`), gates (`[kvHeads, maxLive]`) to read. */
  readonly entries?: { readonly keys: boolean; readonly values: boolean; readonly gates: boolean };
}

/** The attention fields of a `LayerObservation`, computed on the device and read back. */
export interface DeviceObservation {
  /** `[n, queryHeads, maxLive]` attention of the window's queries. */
  readonly attention?: Float32Array;
  /** `[n, queryHeads, headDim]` the window's queries, read back when they were on the device. */
  readonly queries?: Float32Array;
  /** `[kvHeads, maxLive]` accumulated attention. */
  readonly accumulatedAttention?: Float32Array;
  /** `[kvHeads, maxLive]` queries that saw each entry. */
  readonly attentionCounts?: Float32Array;
  /** `[kvHeads, maxLive, headDim]` keys after RoPE, zeros past a head's live entries. */
  readonly keys?: Float32Array;
  /** `[kvHeads, maxLive, headDim]` values, zeros past a head's live entries. */
  readonly values?: Float32Array;
  /** `[kvHeads, maxLive]` gates, zeros past a head's live entries. */
  readonly gates?: Float32Array;
}

/**
 * What a policy observes from the device: the window's attention rows (the query-attention pass;
 * queries kept on the device are first copied together, and read back with the rest), the pool's
 * accumulated sums and, when asked, the live entries' keys, values and gates, packed in live
 * order (the pack pass, bits copied), in one submission and one read-back of
 * `O(n·queryHeads·(maxLive + headDim) + kvHeads·maxLive·(2 + 2·headDim + 1))` floats at most.
 */
export async function observeOnDevice(
  pass: LayerPass,
  request: DeviceObservationRequest,
): Promise<DeviceObservation> {
  const { device, pool } = pass;
  const { live, maxLive, window } = request;
  const buffers = new PassBuffers(device);
  try {
    const encoder = device.createCommandEncoder({ label: 'observation' });
    const parts: { buffer: GPUBuffer; bytes: number }[] = [];
    const held = window?.queries;
    const gathered =
      held === undefined || held instanceof Float32Array
        ? undefined
        : gatherRuns(encoder, buffers, held, pass.queryHeads * pass.geometry.headDim);
    if (gathered !== undefined) parts.push(gathered);
    const compute = encoder.beginComputePass();
    const hasWindow = window !== undefined && window.positions.length > 0 && maxLive > 0;
    if (hasWindow) {
      const { probabilities } = encodeQueryAttention(pass, compute, buffers, {
        queries: gathered ?? (held as Float32Array),
        positions: window.positions,
        live,
        rowStride: maxLive,
      });
      parts.push({
        buffer: probabilities,
        bytes: 4 * window.positions.length * pass.queryHeads * maxLive,
      });
    }
    const sums =
      request.accumulated &&
      maxLive > 0 &&
      pool.attention !== undefined &&
      pool.counts !== undefined
        ? [pool.attention, pool.counts].map((field) =>
            encodePackEntries(pass, compute, buffers, field, live, maxLive),
          )
        : [];
    const sumBytes = 4 * pass.geometry.kvHeads * maxLive;
    for (const buffer of sums) parts.push({ buffer, bytes: sumBytes });
    const { headDim } = pass.geometry;
    const wanted = request.entries;
    const fields = (
      [
        ['keys', pool.keys, headDim, wanted?.keys === true],
        ['values', pool.values, headDim, wanted?.values === true],
        ['gates', pool.gates, 1, wanted?.gates === true],
      ] as const
    ).filter(([, buffer, , asked]) => asked && buffer !== undefined && maxLive > 0);
    for (const [, buffer, width] of fields) {
      const packed = encodePackEntries(pass, compute, buffers, buffer!, live, maxLive, width);
      parts.push({ buffer: packed, bytes: sumBytes * width });
    }
    compute.end();
    device.queue.submit([encoder.finish()]);
    const read = await readBackParts(device, parts);
    const floats = read.map((bytes) => new Float32Array(bytes));
    const queriesRead = gathered === undefined ? undefined : floats.shift()!;
    const windowRows =
      window === undefined ? undefined : hasWindow ? floats.shift()! : new Float32Array(0);
    const [accumulatedAttention, attentionCounts] = request.accumulated
      ? sums.length > 0
        ? floats.splice(0, 2)
        : [new Float32Array(0), new Float32Array(0)]
      : [];
    const packed = Object.fromEntries(
      (['keys', 'values', 'gates'] as const)
        .filter((name) => wanted?.[name] === true)
        .map((name) => {
          const at = fields.findIndex(([field]) => field === name);
          return [name, at < 0 ? new Float32Array(0) : floats[at]!];
        }),
    );
    return {
      ...(windowRows === undefined ? {} : { attention: windowRows }),
      ...(queriesRead === undefined ? {} : { queries: queriesRead }),
      ...(accumulatedAttention === undefined ? {} : { accumulatedAttention, attentionCounts }),
      ...packed,
    };
  } finally {
    buffers.destroy();
  }
}

/**
 * Copies the runs one after the other into a new buffer of `buffers` (encoded before the compute
 * pass); `bytes` the queries' size.
 */
function gatherRuns(
  encoder: GPUCommandEncoder,
  buffers: PassBuffers,
  queries: QueryRuns,
  stride: number,
): { buffer: GPUBuffer; offset: number; bytes: number } {
  const bytes = 4 * stride * queries.runs.reduce((sum, run) => sum + run.tokens, 0);
  const gathered = buffers.scratch(
    bytes,
    'observed query vectors',
    Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST,
  );
  let at = 0;
  for (const run of queries.runs) {
    const floats = run.tokens * stride;
    encoder.copyBufferToBuffer(queries.buffer, 4 * run.offset, gathered, 4 * at, 4 * floats);
    at += floats;
  }
  return { buffer: gathered, offset: 0, bytes };
}
