// Where a decode step's time goes now that attention runs from the cache: the generation of
// `decode-throughput.ts` (2,048 tokens after a 16-token prompt, the quickstart's shape, wasm),
// full cache vs StreamingLLM at 25 %, with the time inside `CacheAttention.attend` (the copy of the
// entries read and the SIMD kernel) summed apart from the rest of the step (tfjs kernels, RoPE,
// sampling, eviction rounds). What bounds StreamingLLM's speed-up: however small its attention,
// the rest of its step costs what the full cache's does.
//
//   cd packages/model && npx tsx bench/attention-share.ts
import { CacheAttention } from '@lethe/kv-cache';
import { StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { DecoderModel, generate } from '../src/index';
import { quickstartShape } from './quickstart-shape';

const SEQUENCE = 2048;
const BUDGET = SEQUENCE / 4;
const config = quickstartShape(4096);

let inAttention = 0;
const attend = CacheAttention.prototype.attend;
CacheAttention.prototype.attend = function timed(...args) {
  const start = performance.now();
  try {
    return attend.apply(this, args);
  } finally {
    inAttention += performance.now() - start;
  }
};

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const model = DecoderModel.random(config, 1);
  const prompt = Int32Array.from({ length: 16 }, (_, i) => (7 * i) % config.vocab_size);
  const budget = { budget: { keepCount: BUDGET }, trigger: { whenLiveExceeds: BUDGET, slack: 32 } };
  await generate({ model, prompts: [prompt], maxNewTokens: 32, seed: 0 }); // warm-up
  console.log(`backend ${backend}; ${SEQUENCE} generated tokens; µs per generated token`);
  console.log('| run | tok/s | whole step | in attention | the rest |');
  console.log('|---|--:|--:|--:|--:|');
  for (const [name, eviction] of [
    ['full cache', undefined],
    ['StreamingLLM 25%', new StreamingLLMPolicy(budget)],
  ] as const) {
    inAttention = 0;
    const start = performance.now();
    const r = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: SEQUENCE,
      ...(eviction === undefined ? {} : { eviction }),
      seed: 0,
    });
    const perToken = (ms: number) => ((1000 * ms) / SEQUENCE).toFixed(0);
    const whole = performance.now() - start;
    console.log(
      `| ${name} | ${r.stats.tokensPerSecond.toFixed(0)} | ${perToken(whole)} | ${perToken(inAttention)} | ${perToken(whole - inAttention)} |`,
    );
  }
  model.dispose();
}

await main();
