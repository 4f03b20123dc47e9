// NAMM's cost per decode step at the same live size as the full cache. A NAMM with the zero
// genome scores every entry 0 and keeps everything, so its cache grows exactly like the full
// cache's while every round still does all the work — attention of the queries since the last
// round over the live entries, the STFT and EMA of every entry, the scorer over every KV head.
// The difference between the two decodes is NAMM's overhead. Runs interleave and the medians are
// reported, all in this one run, for two model shapes (the task models' and a wider one) and two
// update intervals (the task models' 64 and the paper's 512).
//
//   npm run bench:overhead        (from packages/policies-namm, after a build)
import type { EvictionPolicy } from '@lethe/kv-cache';
import { DecoderModel, defaultConfig, generate } from '@lethe/model';
import { initBackend } from '@lethe/tensor';
import { identityNormalization } from '../src/features/token-features';
import { NammPolicy } from '../src/policy/namm-policy';
import { scorerParameterCount } from '../src/scorer/genome-layout';
import { createScorer } from '../src/scorer/scorer';
import type { ScorerSpec } from '../src/scorer/scorer-spec';

// Decode steps 512 … 1535: rounds at 576, 640, … (n_up 64) and at 1024 and 1536 (n_up 512).
const PROMPT = 512;
const DECODE = 1024;
const REPEATS = 3;
const UPDATE_INTERVALS = [64, 512];

const shape = (hidden: number, layers: number, heads: number, intermediate: number) =>
  defaultConfig({
    model_type: 'llama',
    vocab_size: 45,
    hidden_size: hidden,
    intermediate_size: intermediate,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: 2,
    max_position_embeddings: 4096,
    tie_word_embeddings: true,
  });

// Weights do not affect speed.
const BAM: [string, ScorerSpec] = ['BAM H=32', { kind: 'bam', features: 25, hidden: 32 }];
const MLP: [string, ScorerSpec] = ['MLP D=2', { kind: 'mlp', features: 25, depth: 2 }];

/** Model shapes with the scorers timed on each (the wider model's decode is slow: BAM only). */
const MODELS: [string, ReturnType<typeof defaultConfig>, [string, ScorerSpec][]][] = [
  ['task models (hidden 64, 2 layers, 4/2 heads)', shape(64, 2, 4, 128), [BAM, MLP]],
  ['wider (hidden 512, 4 layers, 8/2 heads)', shape(512, 4, 8, 1408), [BAM]],
];

/** Decode time of DECODE tokens after the prompt, ms, and the peak. */
async function decode(model: DecoderModel, prompt: Int32Array, eviction?: EvictionPolicy) {
  const r = await generate({
    model,
    prompts: [prompt],
    maxNewTokens: DECODE,
    sampling: { temperature: 0 },
    ...(eviction === undefined ? {} : { eviction }),
  });
  const stats = r.stats.caches[0]!;
  return { ms: r.stats.decodeMs, peak: stats.peakTotal, rounds: stats.evictionRounds[0]! };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const zeroNamm = (spec: ScorerSpec, updateInterval: number) =>
  new NammPolicy({
    scorer: createScorer(spec, new Float64Array(scorerParameterCount(spec))),
    features: 'spectrogram',
    normalization: identityNormalization(),
    updateInterval,
  });

async function benchModel(
  label: string,
  config: ReturnType<typeof defaultConfig>,
  scorers: readonly [string, ScorerSpec][],
) {
  const model = DecoderModel.random(config, 1);
  const prompt = Int32Array.from({ length: PROMPT }, (_, i) => (7 * i + 3) % config.vocab_size);
  const variants = scorers.flatMap(([name, spec]) =>
    UPDATE_INTERVALS.map((n) => ({ name: `${name}, n_up ${n}`, make: () => zeroNamm(spec, n) })),
  );
  await decode(model, prompt); // warm-up
  const times: number[][] = [[], ...variants.map(() => [])];
  for (let r = 0; r < REPEATS; r++) {
    const full = await decode(model, prompt);
    times[0]!.push(full.ms);
    for (const [v, variant] of variants.entries()) {
      const namm = await decode(model, prompt, variant.make());
      if (namm.peak !== full.peak) {
        throw new Error(`${variant.name} kept ${namm.peak} entries, not ${full.peak}`);
      }
      if (namm.rounds < 2) throw new Error(`${variant.name} ran ${namm.rounds} rounds`);
      times[v + 1]!.push(namm.ms);
    }
  }
  const fullStep = median(times[0]!) / DECODE;
  console.log(`\n${label}: full cache ${fullStep.toFixed(3)} ms per decode step`);
  console.log('| scorer, interval | ms per step | NAMM overhead |');
  console.log('|---|--:|--:|');
  for (const [v, variant] of variants.entries()) {
    const step = median(times[v + 1]!) / DECODE;
    const overhead = (100 * (step - fullStep)) / fullStep;
    console.log(`| ${variant.name} | ${step.toFixed(3)} | ${overhead.toFixed(1)} % |`);
  }
  model.dispose();
}

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  console.log(
    `backend ${backend}; prompt ${PROMPT} tokens then ${DECODE} decoded (live ${PROMPT}–${PROMPT + DECODE} per head), median of ${REPEATS}`,
  );
  for (const [label, config, scorers] of MODELS) await benchModel(label, config, scorers);
}

await main();
