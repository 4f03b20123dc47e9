// The KV cache on the GPU: decode tokens/s of a session whose caches are `DeviceKVCache`s
// (device pages, the paged WGSL attention) against the same session on tfjs's WebGPU backend
// with host caches (`KVCache`, attention by the WebAssembly kernel on the host), at 2,048- and
// 8,192-token contexts; StreamingLLM at 25%, Quest reading 25% and SOL's κ = 0.25 (both ranked on
// the device, by the page bounds it keeps) on the device path; H2O at 25%
// on both (its accumulated attention kept on the device, read back at rounds, against the host
// cache's float64 accumulation); SnapKV at 25% on the device (its 64-query window kept in a ring
// there, the window's attention computed there and read back at rounds); and the host↔device
// traffic per decode step: what the device cache uploads and reads back (counted: H2O's and
// SnapKV's observations at their rounds), what the step reads back from tfjs (counted: the bytes
// of every tensor read — q/k/v per layer on host caches, only the rows' non-finite flags (and
// ranked reads' counts) on device caches — and the logits and hidden state) and in how many reads
// (each one a wait for the device). Every figure is a ratio measured in this one run. Needs WebGPU (in Node:
// Dawn; without a GPU, SwiftShader from Debian's chromium, where "device" work runs on the CPU).
//
//   node scripts/pnpm.mjs --filter @lethe/model bench:device
import { deviceCounters } from '@lethe/kernels-webgpu';
import {
  type ComputePolicy,
  type EvictionPolicy,
  KVCache,
  type ReadSelector,
} from '@lethe/kv-cache';
import {
  H2OPolicy,
  QuestSelector,
  SnapKVPolicy,
  StreamingLLMPolicy,
} from '@lethe/policies-heuristic';
import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { DecoderModel, GenerationSession } from '../src/index';
import { quickstartShape } from './quickstart-shape';

/** Contexts, and the decode steps timed at each. */
const CONTEXTS: readonly (readonly [context: number, steps: number])[] = [
  [2048, 32],
  [8192, 16],
];
const PREFILL_CHUNK = 512;
const KEEP = 0.25;
const config = quickstartShape(16384);

interface Run {
  readonly name: string;
  readonly host?: boolean;
  readonly eviction?: EvictionPolicy;
  readonly readSelector?: ReadSelector;
  readonly compute?: ComputePolicy;
}

/** SOL's κ read at one rate in every layer: a compute policy setting `tokenKeep` only. */
function fixedKeep(keepRate: number): ComputePolicy {
  return {
    name: `κ = ${keepRate}`,
    controls: () =>
      Array.from({ length: config.num_hidden_layers }, () => ({ tokenKeep: keepRate })),
  };
}

/** Asynchronous tensor reads so far (every `data()`: a wait for the device's results), and their bytes. */
let tensorReads = 0;
let tensorReadBytes = 0;
const read = tf.Tensor.prototype.data;
tf.Tensor.prototype.data = function (this: tf.Tensor) {
  tensorReads++;
  tensorReadBytes += 4 * this.size;
  return read.call(this);
} as typeof read;

async function timeRun(model: DecoderModel, context: number, steps: number, run: Run) {
  const session = new GenerationSession({
    model,
    prefillChunk: PREFILL_CHUNK,
    ...(run.host ? { createCache: (options) => new KVCache(options) } : {}),
    ...(run.eviction === undefined ? {} : { eviction: run.eviction }),
    ...(run.readSelector === undefined ? {} : { readSelector: run.readSelector }),
    ...(run.compute === undefined ? {} : { compute: run.compute }),
  });
  const prompt = Int32Array.from({ length: context }, (_, i) => (7 * i + 3) % config.vocab_size);
  await session.prefill([prompt]);
  await session.step([0], Int32Array.of(1)); // warm-up step (pipelines compiled)
  const before = deviceCounters();
  const readsBefore = tensorReads;
  const readBytesBefore = tensorReadBytes;
  const t0 = performance.now();
  for (let s = 0; s < steps; s++) await session.step([0], Int32Array.of((5 * s + 1) % 32));
  const seconds = (performance.now() - t0) / 1000;
  const after = deviceCounters();
  const reads = (tensorReads - readsBefore) / steps;
  const readBytes = (tensorReadBytes - readBytesBefore) / steps;
  session.dispose();
  return {
    tokensPerSecond: steps / seconds,
    uploaded: (after.uploadedBytes - before.uploadedBytes) / steps,
    downloaded: (after.downloadedBytes - before.downloadedBytes) / steps,
    reads,
    readBytes,
  };
}

async function main(): Promise<void> {
  await ensureWebGpu({ required: true });
  await initBackend('webgpu');
  const model = DecoderModel.random(config, 1);
  const { num_hidden_layers: L, num_attention_heads: Hq, num_key_value_heads: Hkv } = config;
  const rowBytes = 4 * L * (Hq + 2 * Hkv) * config.head_dim;
  const outputBytes = 4 * (config.vocab_size + config.hidden_size);
  console.log(
    `webgpu; ${L} layers, ${Hq}/${Hkv} heads of ${config.head_dim}; per decode step a token's ` +
      `q/k/v rows of every layer are ${rowBytes} bytes, its logits and hidden state ${outputBytes}`,
  );
  for (const [context, steps] of CONTEXTS) {
    const budget = Math.round(context * KEEP);
    const h2o = () =>
      new H2OPolicy({
        budget: { keepCount: budget },
        trigger: { whenLiveExceeds: budget, slack: 8 },
      });
    const runs: Run[] = [
      { name: 'host cache (wasm attention)', host: true },
      { name: 'device cache' },
      {
        name: 'device, StreamingLLM 25%',
        eviction: new StreamingLLMPolicy({
          budget: { keepCount: budget },
          trigger: { whenLiveExceeds: budget, slack: 32 },
        }),
      },
      {
        name: 'device, Quest 25%',
        readSelector: new QuestSelector({ tokenBudget: budget, pageSize: 16, denseLayers: 0 }),
      },
      { name: 'device, κ = 0.25', compute: fixedKeep(KEEP) },
      { name: 'host cache, H2O 25%', host: true, eviction: h2o() },
      { name: 'device, H2O 25%', eviction: h2o() },
      {
        name: 'device, SnapKV 25%',
        eviction: new SnapKVPolicy({
          budget: { keepCount: budget },
          trigger: { whenLiveExceeds: budget, slack: 8 },
        }),
      },
    ];
    let reference: number | undefined;
    for (const run of runs) {
      const r = await timeRun(model, context, steps, run);
      reference ??= r.tokensPerSecond;
      console.log(
        `${String(context).padStart(5)}  ${run.name.padEnd(28)} ${r.tokensPerSecond.toFixed(1).padStart(7)} tok/s ` +
          `(×${(r.tokensPerSecond / reference).toFixed(2)} of the host cache)   ` +
          `uploaded ${Math.round(r.uploaded)} B/step, read back ${Math.round(r.downloaded)} B/step; ` +
          `from tfjs ${r.reads.toFixed(1)} reads, ${Math.round(r.readBytes)} B/step`,
      );
    }
  }
  model.dispose();
}

await main();
