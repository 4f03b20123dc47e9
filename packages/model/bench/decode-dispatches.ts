// Kernel dispatches per decode step (not a test): the tfjs kernels one `decodeStep` of the
// quickstart-shaped model (2 layers) runs, counted by name with `tf.profile`, for one sequence and
// for a batch of 8, with a full cache, with StreamingLLM at 25% and Quest reading 25% (on webgpu
// ranked on the device: its page bounds and ranking passes counted), after a prefill of 2,048
// tokens, on the backend in LETHE_BACKEND (default wasm): 66 on wasm since cached steps attend
// from the cache (220 before; issue 31 asked for at least halved). On webgpu the caches are the
// default `DeviceKVCache`s and the WGSL dispatches of @lethe/kernels-webgpu (attention passes and
// merges, compactions) are counted too (`deviceCounters()`).
//
//   npx tsx bench/decode-dispatches.ts                          (from packages/model)
//   LETHE_BACKEND=webgpu npx tsx bench/decode-dispatches.ts     (needs WebGPU)
import { deviceCounters } from '@lethe/kernels-webgpu';
import { KVCache } from '@lethe/kv-cache';
import { QuestSelector, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { ensureWebGpu, initBackend, tf } from '@lethe/tensor';
import { DecoderModel, GenerationSession } from '../src/index';
import { quickstartShape } from './quickstart-shape';

const CONTEXT = 2048;
const STEPS = 8;
const config = quickstartShape(4096);

/** Kernels per decode step by name (mean over `STEPS` steps) after a prefill of `CONTEXT` tokens. */
async function dispatches(
  model: DecoderModel,
  batch: number,
  policy: 'full' | 'streaming' | 'quest',
) {
  const eviction =
    policy === 'streaming'
      ? new StreamingLLMPolicy({ budget: { keepCount: CONTEXT / 4 - 1 } })
      : undefined;
  const session = new GenerationSession({
    model,
    prefillChunk: 256,
    ...(eviction === undefined ? {} : { eviction, ceiling: CONTEXT / 4 }),
    ...(policy === 'quest'
      ? { readSelector: new QuestSelector({ tokenBudget: CONTEXT / 4, denseLayers: 0 }) }
      : {}),
    ...(tf.getBackend() === 'webgpu' ? {} : { createCache: (options) => new KVCache(options) }),
  });
  const prompt = Int32Array.from({ length: CONTEXT }, (_, i) => (7 * i) % config.vocab_size);
  await session.prefill(Array.from({ length: batch }, () => prompt));
  const sequences = Array.from({ length: batch }, (_, b) => b);
  const counts = new Map<string, number>();
  const wgslBefore = deviceCounters().dispatches;
  for (let step = 0; step < STEPS; step++) {
    const tokens = Int32Array.from(sequences, (b) => (step + b) % config.vocab_size);
    const info = await tf.profile(() => session.step(sequences, tokens).then(() => undefined));
    for (const kernel of info.kernels) {
      // a tidy's scope is recorded as an entry of its own: not a kernel
      if (kernel.name === 'unnamed scope') continue;
      counts.set(kernel.name, (counts.get(kernel.name) ?? 0) + 1);
    }
  }
  const wgsl = deviceCounters().dispatches - wgslBefore;
  if (wgsl > 0) counts.set('WGSL (@lethe/kernels-webgpu)', wgsl);
  for (const [name, count] of counts) counts.set(name, count / STEPS);
  session.dispose();
  return counts;
}

async function main(): Promise<void> {
  const requested = (process.env.LETHE_BACKEND as 'wasm' | 'webgpu') ?? 'wasm';
  if (requested === 'webgpu') await ensureWebGpu({ required: true });
  const backend = await initBackend(requested);
  const model = DecoderModel.random(config, 1);
  const runs = [
    ['1 sequence, full cache', await dispatches(model, 1, 'full')],
    ['8 sequences, full cache', await dispatches(model, 8, 'full')],
    ['1 sequence, StreamingLLM 25%', await dispatches(model, 1, 'streaming')],
    ['1 sequence, Quest 25%', await dispatches(model, 1, 'quest')],
  ] as const;
  const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(
    `backend ${backend}; ${config.num_hidden_layers} layers; kernels per decode step after ${CONTEXT} prompt tokens`,
  );
  console.log(`| kernel | ${runs.map(([name]) => name).join(' | ')} |`);
  console.log(`|---|${runs.map(() => '--:').join('|')}|`);
  console.log(`| **all** | ${runs.map(([, counts]) => total(counts).toFixed(0)).join(' | ')} |`);
  const names = [...runs[0][1]].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  for (const name of names) {
    console.log(
      `| ${name} | ${runs.map(([, counts]) => (counts.get(name) ?? 0).toFixed(0)).join(' | ')} |`,
    );
  }
  model.dispose();
}

await main();
