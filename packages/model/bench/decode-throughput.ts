// Decode throughput and KV memory: full cache vs StreamingLLM and H2O (eviction) and Quest
// (read-time page selection, evicts nothing; its pages are gathered from the cache) at a 25%
// budget on a 2,048-token generation, and batched vs one-at-a-time decoding for a GRPO-sized
// group of 16. Every figure is a ratio measured in this one run. `read-sparsity.ts` compares
// reading a quarter of the cache with holding a quarter at fixed 2,048- and 8,192-token contexts.
//
//   pnpm --filter @lethe/model bench
import type { EvictionPolicy, ReadSelector } from '@lethe/kv-cache';
import { H2OPolicy, QuestSelector, StreamingLLMPolicy } from '@lethe/policies-heuristic';
import { initBackend } from '@lethe/tensor';
import { DecoderModel, generate } from '../src/index';
import { quickstartShape } from './quickstart-shape';

const SEQUENCE = 2048;
const BUDGET = SEQUENCE / 4;
const GROUP = 16;
const GROUP_TOKENS = 128;

const config = quickstartShape(4096);

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const model = DecoderModel.random(config, 1);
  const prompt = Int32Array.from({ length: 16 }, (_, i) => (7 * i) % config.vocab_size);
  const budget = { budget: { keepCount: BUDGET }, trigger: { whenLiveExceeds: BUDGET, slack: 32 } };
  // The model has only two layers, so Quest's usual two dense leading layers are switched off.
  const quest = new QuestSelector({ tokenBudget: BUDGET, pageSize: 16, denseLayers: 0 });
  const runs: [string, { eviction?: EvictionPolicy; readSelector?: ReadSelector }][] = [
    ['full cache', {}],
    ['StreamingLLM 25%', { eviction: new StreamingLLMPolicy(budget) }],
    ['H2O 25%', { eviction: new H2OPolicy(budget) }],
    ['Quest 25%', { readSelector: quest }],
  ];
  console.log(
    `backend ${backend}; ${SEQUENCE} generated tokens, budget ${BUDGET} entries per KV head`,
  );
  await generate({ model, prompts: [prompt], maxNewTokens: 32, seed: 0 }); // warm-up
  let full: { tps: number; peak: number } | undefined;
  for (const [name, policies] of runs) {
    const r = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: SEQUENCE,
      ...policies,
      seed: 0,
    });
    const tps = r.stats.tokensPerSecond;
    const peak = r.stats.caches[0]!.peakTotal;
    full ??= { tps, peak };
    console.log(
      `${name.padEnd(18)} ${tps.toFixed(1).padStart(7)} tok/s (×${(tps / full.tps).toFixed(2)})   ` +
        `peak KV entries ${String(peak).padStart(6)} (×${(peak / full.peak).toFixed(3)})`,
    );
  }

  const group = Array.from({ length: GROUP }, () => prompt);
  const t0 = performance.now();
  await generate({ model, prompts: group, maxNewTokens: GROUP_TOKENS, seed: 0 });
  const batchedMs = performance.now() - t0;
  const t1 = performance.now();
  for (let b = 0; b < GROUP; b++) {
    await generate({
      model,
      prompts: [prompt],
      maxNewTokens: GROUP_TOKENS,
      seed: 0,
      streamIds: [b],
    });
  }
  const singleMs = performance.now() - t1;
  const tokens = GROUP * GROUP_TOKENS;
  console.log(
    `group of ${GROUP} × ${GROUP_TOKENS} tokens: batched ${((1000 * tokens) / batchedMs).toFixed(0)} tok/s, ` +
      `one at a time ${((1000 * tokens) / singleMs).toFixed(0)} tok/s (batched ×${(singleMs / batchedMs).toFixed(2)})`,
  );
}

await main();
