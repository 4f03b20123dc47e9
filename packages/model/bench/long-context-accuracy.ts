// Where cached decode drifts over a long context, and why. The long-context test's model
// (test/decoder/long-context-decode.test.ts: hidden 32, head_dim 16 — eight rotary frequencies,
// θ = 10⁴ — 2 query heads over 1 KV head, 2 layers, lively weights, seed 1) decodes every token of
// a 3,200-token sequence one step at a time on wasm. Its logits are compared, per bucket of 100
// positions, with the parallel forward over the whole sequence and with a float64 forward
// written from the equations (test/support/float64-decoder.ts) under three rotary angles:
//   HF angles      `fround(position · inv_freq)`, inv_freq by HF's float32 recipe — what
//                  transformers computes and the model does;
//   rounded        the same with correctly rounded float32 inv_freq (the model's before);
//   exact          `position · θ^(−2i/d)` in float64.
// Each figure is the largest |difference| of a logit over the bucket.
//
//   cd packages/model && npx tsx bench/long-context-accuracy.ts
import { KVCache } from '@lethe/kv-cache';
import { initBackend } from '@lethe/tensor';
import { ropeInverseFrequencies } from '../src/decoder/rope';
import {
  forwardRows,
  lively,
  maxAbsDiff,
  randomTokens,
  storeFor,
  takeLogits,
  tinyConfig,
} from '../test/decoder/helpers';
import { float64Logits } from '../test/support/float64-decoder';

const LENGTH = 3_200;
const BUCKET = 100;
const f32 = Math.fround;

await initBackend('wasm');
const config = tinyConfig({
  hidden_size: 32,
  head_dim: 16,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  max_position_embeddings: 4_096,
});
const model = lively(config, 1);
const weights = model.toTensors();
const tokens = randomTokens(1, LENGTH, config.vocab_size);
const positions = Array.from(tokens, (_, t) => t);

const hf = ropeInverseFrequencies(config.head_dim, config.rope_theta);
const rounded = Float32Array.from(hf, (_, i) =>
  f32(config.rope_theta ** ((-2 * i) / config.head_dim)),
);
const differing = [...hf.keys()].filter((i) => hf[i] !== rounded[i]);
console.log(`inv_freq: HF's float32 recipe is an ulp off correct rounding at i = ${differing}`);

const cache = storeFor((options) => new KVCache(options), config, { pageSize: 16 });
const decoded = takeLogits(model.prefill([cache], [tokens.subarray(0, 1)]));
for (let t = 1; t < LENGTH; t++) {
  decoded.push(...takeLogits(model.decodeStep([cache], tokens.subarray(t, t + 1))));
}
const forward = forwardRows(model, tokens);
const angles = {
  'HF angles': (p: number, i: number) => f32(p * hf[i]!),
  rounded: (p: number, i: number) => f32(p * rounded[i]!),
  exact: undefined,
};
const references = Object.entries(angles).map(
  ([name, angle]) =>
    [name, float64Logits(config, weights, tokens, positions, angle ? { angle } : {})] as const,
);

/** The largest difference of rows `a[t]` and `b[t]` over the bucket starting at `start`. */
function worst(a: readonly ArrayLike<number>[], b: readonly ArrayLike<number>[], start: number) {
  let most = 0;
  for (let t = start; t < start + BUCKET; t++) most = Math.max(most, maxAbsDiff(a[t]!, b[t]!));
  return most.toExponential(1);
}

const rows = [];
for (let start = 0; start < LENGTH; start += 4 * BUCKET) {
  const row: Record<string, string> = { positions: `${start}–${start + BUCKET - 1}` };
  row['decode − forward'] = worst(decoded, forward, start);
  for (const [name, reference] of references) {
    row[`decode − f64 ${name}`] = worst(decoded, reference, start);
  }
  row['forward − f64 HF angles'] = worst(forward, references[0]![1], start);
  rows.push(row);
}
const last = LENGTH - BUCKET;
rows.push({
  positions: `${last}–${LENGTH - 1}`,
  'decode − forward': worst(decoded, forward, last),
  ...Object.fromEntries(
    references.map(([name, reference]) => [
      `decode − f64 ${name}`,
      worst(decoded, reference, last),
    ]),
  ),
  'forward − f64 HF angles': worst(forward, references[0]![1], last),
});
console.table(rows);
model.dispose();
