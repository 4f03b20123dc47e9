import { readBackParts } from '../device/read-back';
import { type LayerPass, PassBuffers } from './layer-pass';
import { encodePackEntries } from './pack-entries';
import { encodeQueryAttention } from './query-attention';

/** What one observation asks of the device. */
export interface DeviceObservationRequest {
  /** `[kvHeads]` live entries per KV head. */
  readonly live: Int32Array;
  /** Row stride of the per-entry arrays (`max(live)`). */
  readonly maxLive: number;
  /** The recent queries whose attention the policy reads (`[n, queryHeads, headDim]`), if any. */
  readonly window?: { readonly queries: Float32Array; readonly positions: Int32Array };
  /** Whether to read the accumulated attention and its counts. */
  readonly accumulated: boolean;
}

/** The attention fields of a `LayerObservation`, computed on the device and read back. */
export interface DeviceObservation {
  /** `[n, queryHeads, maxLive]` attention of the window's queries. */
  readonly attention?: Float32Array;
  /** `[kvHeads, maxLive]` accumulated attention. */
  readonly accumulatedAttention?: Float32Array;
  /** `[kvHeads, maxLive]` queries that saw each entry. */
  readonly attentionCounts?: Float32Array;
}

/**
 * The attention a policy observes, from the device: the window's attention rows (the
 * query-attention pass) and the pool's accumulated sums packed in live order, in one submission
 * and one read-back of `O(n·queryHeads·maxLive + 2·kvHeads·maxLive)` floats.
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
    const compute = encoder.beginComputePass();
    const parts: { buffer: GPUBuffer; bytes: number }[] = [];
    const hasWindow = window !== undefined && window.positions.length > 0 && maxLive > 0;
    if (hasWindow) {
      const { probabilities } = encodeQueryAttention(pass, compute, buffers, {
        ...window,
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
    compute.end();
    device.queue.submit([encoder.finish()]);
    const read = await readBackParts(device, parts);
    const floats = read.map((bytes) => new Float32Array(bytes));
    const windowRows =
      window === undefined ? undefined : hasWindow ? floats.shift()! : new Float32Array(0);
    const [accumulatedAttention, attentionCounts] = request.accumulated
      ? maxLive > 0
        ? floats
        : [new Float32Array(0), new Float32Array(0)]
      : [];
    return {
      ...(windowRows === undefined ? {} : { attention: windowRows }),
      ...(accumulatedAttention === undefined ? {} : { accumulatedAttention, attentionCounts }),
    };
  } finally {
    buffers.destroy();
  }
}
