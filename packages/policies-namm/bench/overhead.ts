// NAMM's cost per decode step at the same live size as the full cache. A NAMM with the zero
// genome scores every entry 0 and keeps everything, so its cache grows exactly like the full
// cache's while every round still does all the work — attention of the last n_up queries over the
// live entries, the STFT and EMA of every entry, the BAM scorer over every KV head. The difference
// between the two decodes is NAMM's overhead; runs interleave, and the medians are reported, all
// in this one run.
//
//   npx tsx bench/overhead.ts        (from packages/policies-namm, after a build)
import type { EvictionPolicy } from '@lethe/kv-cache';
import { DecoderModel, defaultConfig, generate } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { identityNormalization } from '../src/features/token-features';
import { NammPolicy } from '../src/policy/namm-policy';
import { scorerParameterCount } from '../src/scorer/genome-layout';
import { createScorer } from '../src/scorer/scorer';
import type { ScorerSpec } from '../src/scorer/scorer-spec';

const PROMPT = 1024;
const DECODE = 256;
const REPEATS = 5;
const UPDATE_INTERVAL = 64;

// The shape of the retrieval task models (weights do not affect speed).
const config = defaultConfig({
  model_type: 'llama',
  vocab_size: 45,
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 4096,
  tie_word_embeddings: true,
});

/** Wall time of a decode of DECODE tokens after the prompt, ms. */
async function decodeMs(model: DecoderModel, prompt: Int32Array, eviction?: EvictionPolicy) {
  const r = await generate({
    model,
    prompts: [prompt],
    maxNewTokens: DECODE,
    sampling: { temperature: 0 },
    ...(eviction === undefined ? {} : { eviction }),
  });
  return { ms: r.stats.decodeMs, live: r.stats.caches[0]!.peakTotal };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const model = DecoderModel.random(config, 1);
  const prompt = Int32Array.from({ length: PROMPT }, (_, i) => (7 * i + 3) % config.vocab_size);
  console.log(
    `backend ${backend}; prompt ${PROMPT} tokens, ${DECODE} decoded, n_up ${UPDATE_INTERVAL}, median of ${REPEATS}`,
  );
  const specs: [string, ScorerSpec][] = [
    ['BAM H=32', { kind: 'bam', features: 25, hidden: 32 }],
    ['MLP D=2', { kind: 'mlp', features: 25, depth: 2 }],
  ];
  const policy = (spec: ScorerSpec) =>
    new NammPolicy({
      scorer: createScorer(spec, new Float64Array(scorerParameterCount(spec))),
      features: 'spectrogram',
      normalization: identityNormalization(),
      updateInterval: UPDATE_INTERVAL,
    });
  await decodeMs(model, prompt); // warm-up
  const times: Record<string, number[]> = { full: [] };
  for (const [name] of specs) times[name] = [];
  let peak = 0;
  for (let r = 0; r < REPEATS; r++) {
    const full = await decodeMs(model, prompt);
    times.full!.push(full.ms);
    peak = full.live;
    for (const [name, spec] of specs) {
      const namm = await decodeMs(model, prompt, policy(spec));
      if (namm.live !== full.live) throw new Error(`${name} kept ${namm.live}, not ${full.live}`);
      times[name]!.push(namm.ms);
    }
  }
  const fullStep = median(times.full!) / DECODE;
  console.log(`full cache: ${fullStep.toFixed(3)} ms per decode step (peak ${peak} KV entries)`);
  for (const [name] of specs) {
    const step = median(times[name]!) / DECODE;
    const overhead = (step - fullStep) / fullStep;
    console.log(
      `${name.padEnd(9)}: ${step.toFixed(3)} ms per step, NAMM overhead ${(100 * overhead).toFixed(1)}% of a full-cache step`,
    );
  }
  model.dispose();
}

await main();
