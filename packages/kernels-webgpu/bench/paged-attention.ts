// The paged attention kernel alone: one decode query token over a layer of a `DeviceKVCache` at
// 2,048 and 8,192 cached entries per KV head — every live entry (the full cache), a cache holding
// 25% (StreamingLLM's), and 25% of the pages chosen scattered over the full cache (a Quest / κ
// read) — in microseconds per call (dispatches, merge and the output's read-back, median of the
// repeats) and the effective bandwidth of the keys and values read; a batch of 8 sequences of
// context/8 entries each in one launch (`attendBatch`) against 8 launches; and what observations
// cost on the device: H2O's accumulation of one decode query (`recordQueries` of a tracking
// cache) and the attention of an 8-query window read back (`observeAsync`). Two shapes: the
// quickstart's (2 KV heads, GQA 2, head dim 16) and a Llama-like layer (8 KV heads, GQA 4, head
// dim 128). Ratios are measured in this one run. Needs WebGPU (in Node: Dawn; without a GPU, SwiftShader).
//
//   node scripts/pnpm.mjs --filter @lethe/kernels-webgpu bench
import { ensureWebGpu } from '@lethe/tensor';
import { destroyGpuBuffer } from '../src/device/gpu-buffers';
import { DeviceKVCache, readBack } from '../src/index';

const CONTEXTS = [2048, 8192];
const REPEATS = 15;
const PAGE = 16;
const SHAPES = [
  { name: 'quickstart', kvHeads: 2, group: 2, headDim: 16 },
  { name: 'llama-like', kvHeads: 8, group: 4, headDim: 128 },
] as const;

/** A layer's cache of `entries` tokens with a deterministic signal (tracking attention, with a window of 8, if asked). */
function filled(
  device: GPUDevice,
  shape: (typeof SHAPES)[number],
  entries: number,
  tracking = false,
) {
  const cache = new DeviceKVCache(
    {
      geometry: { layers: 1, kvHeads: shape.kvHeads, headDim: shape.headDim, pageSize: PAGE },
      queryHeads: shape.kvHeads * shape.group,
      trace: false,
      ...(tracking ? { trackAttention: true, queryWindow: 8 } : {}),
    },
    device,
  );
  const chunk = 1024;
  for (let start = 0; start < entries; start += chunk) {
    const tokens = Math.min(chunk, entries - start);
    const width = tokens * shape.kvHeads * shape.headDim;
    const rows = Float32Array.from({ length: width }, (_, i) => Math.sin(i * 0.37 + start));
    cache.append(
      0,
      rows,
      rows,
      Int32Array.from({ length: tokens }, (_, i) => start + i),
    );
  }
  return cache;
}

/** Median microseconds of `run` (which waits for its device work), after two warm-up calls. */
async function median(run: () => Promise<void>): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < REPEATS + 2; r++) {
    const t0 = performance.now();
    await run();
    if (r >= 2) samples.push((performance.now() - t0) * 1000);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

/** Median microseconds of one attention call (its output read back to wait for it). */
function time(device: GPUDevice, attend: () => GPUBuffer): Promise<number> {
  return median(async () => {
    const out = attend();
    await readBack(device, out, 4);
    destroyGpuBuffer(out);
  });
}

/** A batch of 8 sequences of `context / 8` entries: 8 launches against one. */
async function batchRows(device: GPUDevice, shape: (typeof SHAPES)[number], context: number) {
  const caches = Array.from({ length: 8 }, () => filled(device, shape, context / 8));
  const queries = Float32Array.from(
    { length: shape.kvHeads * shape.group * shape.headDim },
    (_, i) => Math.sin(i),
  );
  const parts = caches.map((cache) => ({
    cache,
    request: { queries, queryPositions: Int32Array.of(context / 8) },
  }));
  const separate = await median(async () => {
    const outs = parts.map(({ cache, request }) => cache.attend(0, request));
    await readBack(device, outs[7]!, 4);
    for (const out of outs) destroyGpuBuffer(out);
  });
  const batched = await time(device, () => DeviceKVCache.attendBatch(0, parts));
  for (const cache of caches) cache.dispose();
  console.log(
    `${shape.name.padEnd(10)} ${String(context).padStart(5)}  8 × ${context / 8} entries: ` +
      `8 launches ${separate.toFixed(0)} µs, one batched ${batched.toFixed(0)} µs ` +
      `(×${(separate / batched).toFixed(2)})`,
  );
}

/** H2O's accumulation of one query and an 8-query window's attention, on the device. */
async function observationRows(device: GPUDevice, shape: (typeof SHAPES)[number], context: number) {
  const cache = filled(device, shape, context, true);
  const queryWidth = shape.kvHeads * shape.group * shape.headDim;
  const queries = Float32Array.from({ length: 8 * queryWidth }, (_, i) => Math.cos(i * 0.1));
  cache.recordQueries(
    0,
    queries,
    Int32Array.from({ length: 8 }, (_, i) => context - 8 + i),
  );
  // the accumulation of a decode query: recorded again and again over the last position
  let position = context;
  const row = new Float32Array(shape.kvHeads * shape.headDim);
  const accumulate = await median(async () => {
    cache.append(0, row, row, Int32Array.of(position));
    cache.recordQueries(0, queries.subarray(0, queryWidth), Int32Array.of(position));
    position++;
    await device.queue.onSubmittedWorkDone();
  });
  const needs = {
    attentionWindow: 8,
    accumulatedAttention: true,
    keys: false,
    values: false,
    hidden: false,
  };
  const observe = await median(async () => {
    await cache.observeAsync(0, needs);
  });
  cache.dispose();
  console.log(
    `${shape.name.padEnd(10)} ${String(context).padStart(5)}  observations: accumulate one ` +
      `query ${accumulate.toFixed(0)} µs (append included), observe window 8 + sums ${observe.toFixed(0)} µs`,
  );
}

async function main(): Promise<void> {
  await ensureWebGpu({ required: true });
  const adapter = (await navigator.gpu.requestAdapter())!;
  const device = await adapter.requestDevice();
  const info = adapter.info;
  console.log(`adapter: ${info.vendor} ${info.architecture} ${info.description}`.trim());
  for (const shape of SHAPES) {
    for (const context of CONTEXTS) {
      const full = filled(device, shape, context);
      const quarter = filled(device, shape, context / 4);
      const queries = Float32Array.from(
        { length: shape.kvHeads * shape.group * shape.headDim },
        (_, i) => Math.cos(i),
      );
      const request = { queries, queryPositions: Int32Array.of(context) };
      // every fourth page: a quarter of the entries, scattered over the whole cache
      const pages = context / PAGE;
      const scattered = Int32Array.from({ length: (pages / 4) * 2 }, (_, i) =>
        i % 2 === 0 ? (i / 2) * 4 * PAGE : ((i - 1) / 2) * 4 * PAGE + PAGE,
      );
      const ranges = Array.from({ length: shape.kvHeads }, () => scattered);
      const runs = [
        ['full cache', context, () => full.attend(0, request)],
        ['25% held', context / 4, () => quarter.attend(0, request)],
        ['25% of pages read', context / 4, () => full.attend(0, { ...request, ranges })],
      ] as const;
      let reference: number | undefined;
      for (const [name, entries, attend] of runs) {
        const us = await time(device, attend);
        reference ??= us;
        const bytes = 2 * 4 * entries * shape.kvHeads * shape.headDim;
        console.log(
          `${shape.name.padEnd(10)} ${String(context).padStart(5)}  ${name.padEnd(18)} ` +
            `${us.toFixed(0).padStart(7)} µs (×${(reference / us).toFixed(2)} of the full cache)  ` +
            `${(bytes / us / 1000).toFixed(2)} GB/s of keys and values`,
        );
      }
      full.dispose();
      quarter.dispose();
      await batchRows(device, shape, context);
      await observationRows(device, shape, context);
    }
  }
  device.destroy();
}

await main();
