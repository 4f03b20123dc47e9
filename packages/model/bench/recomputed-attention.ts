// Training cost of the two attention paths of the parallel forward: probabilities on the tape
// (`capture: { attention: true }`, the path before recomputed attention) and recomputed in the
// backward (`attentionOutput`, the default). One forward and backward of a mean-logit loss on
// the suite models' shape (3 layers, hidden 64, 4 query heads over 2 KV heads, head dim 16), one
// sequence, T = 256 … 1,536 tokens; median of 5 rounds after a warm-up, both paths in turns in
// this one run; the ratio is taped over recomputed.
//
//   cd packages/model && npx tsx bench/recomputed-attention.ts
import { initBackend, tf } from '@lethe/tensor';
import { DecoderModel } from '../src/decoder/index';
import { defaultConfig } from '../src/io/index';
import { medianMs } from './median-ms';

const ROUNDS = 5;

/** A model of the suite backbone's shape (random weights: they do not change the speed). */
function suiteShapedModel(): DecoderModel {
  const config = defaultConfig({
    model_type: 'llama',
    vocab_size: 771,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 4096,
    tie_word_embeddings: true,
  });
  return DecoderModel.random(config, 5);
}

async function main(): Promise<void> {
  await initBackend('wasm');
  const model = suiteShapedModel();
  console.log(`training pass, taped vs recomputed attention (wasm, Node ${process.version})`);
  console.log('| T | taped ms | recomputed ms | taped / recomputed |');
  console.log('|--:|--:|--:|--:|');
  for (const length of [256, 512, 1024, 1536]) {
    const ids = tf.tensor2d(
      Int32Array.from({ length }, (_, i) => (i * 7) % 771),
      [1, length],
      'int32',
    );
    const pass = (capture: boolean) => () => {
      const { value, grads } = tf.variableGrads(
        () => tf.mean(model.forward(ids, { capture: { attention: capture } }).logits) as tf.Scalar,
      );
      value.dataSync();
      tf.dispose([value, ...Object.values(grads)]);
    };
    const times = { taped: [] as number[], recomputed: [] as number[] };
    pass(true)();
    pass(false)();
    for (let round = 0; round < ROUNDS; round++) {
      times.taped.push(medianMs(pass(true), 1));
      times.recomputed.push(medianMs(pass(false), 1));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const taped = median(times.taped);
    const recomputed = median(times.recomputed);
    console.log(
      `| ${length} | ${taped.toFixed(0)} | ${recomputed.toFixed(0)} | ${(taped / recomputed).toFixed(2)} |`,
    );
    ids.dispose();
  }
  model.dispose();
}

await main();
