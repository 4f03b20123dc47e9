// What SOL's MLP knobs cost or save on tfjs: decode tok/s of a model whose MLP dominates the step
// with ρ (mlpInputKeep, App. E.2), the intermediate-channel keep (mlpKeep) and q-bit output
// quantisation (activationBits, App. E.3), all as masks / fake quantisation over dense matmuls;
// then the MLP's gate and up projections of one token alone, dense vs with only the kept input
// channels gathered from the weights (what skipping pruned channels would cost in tfjs). Every
// figure is a ratio measured in this one run.
//
//   pnpm --filter @lethe/model bench:mlp
import type { ComputePolicy, LayerControls } from '@lethe/kv-cache';
import { initBackend, Rng, tf } from '@lethe/tensor';
import { DecoderModel, defaultConfig, generate } from '../src/index';

const PROMPT = 64;
const TOKENS = 192;
const REPEATS = 3;

// A model shaped so that the MLP, not attention, is most of a short-context decode step.
const config = defaultConfig({
  model_type: 'llama',
  vocab_size: 64,
  hidden_size: 512,
  intermediate_size: 2048,
  num_hidden_layers: 4,
  num_attention_heads: 8,
  num_key_value_heads: 2,
  max_position_embeddings: 1024,
  tie_word_embeddings: true,
});

/** The same controls in every layer at every step. */
class Uniform implements ComputePolicy {
  readonly name = 'uniform';
  constructor(private readonly perLayer: LayerControls) {}
  controls(): readonly LayerControls[] {
    return Array.from({ length: config.num_hidden_layers }, () => this.perLayer);
  }
}

async function decodeRate(model: DecoderModel, controls?: LayerControls): Promise<number> {
  const prompt = Int32Array.from({ length: PROMPT }, (_, i) => (5 * i) % config.vocab_size);
  let best = 0;
  for (let r = 0; r < REPEATS; r++) {
    const result = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: TOKENS,
      seed: 0,
      ...(controls === undefined ? {} : { compute: new Uniform(controls) }),
    });
    best = Math.max(best, result.stats.tokensPerSecond);
  }
  return best;
}

/** Milliseconds per call of `run` (best of `REPEATS` batches of 200 calls). */
function timeCalls(run: () => tf.Tensor): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < REPEATS; r++) {
    const start = performance.now();
    for (let i = 0; i < 200; i++) {
      const out = run();
      out.dataSync();
      out.dispose();
    }
    best = Math.min(best, (performance.now() - start) / 200);
  }
  return best;
}

async function main(): Promise<void> {
  const backend = await initBackend((process.env.LETHE_BACKEND as 'wasm') ?? 'wasm');
  const model = DecoderModel.random(config, 1);
  console.log(
    `backend ${backend}; hidden ${config.hidden_size}, intermediate ${config.intermediate_size}, ` +
      `${config.num_hidden_layers} layers; ${PROMPT}-token prompt, ${TOKENS} decoded tokens, best of ${REPEATS}`,
  );
  await decodeRate(model); // warm-up
  const dense = await decodeRate(model);
  const runs: [string, LayerControls][] = [
    ['mlpInputKeep ρ 0.5', { mlpInputKeep: 0.5 }],
    ['mlpInputKeep ρ 0.25', { mlpInputKeep: 0.25 }],
    ['mlpKeep 0.5', { mlpKeep: 0.5 }],
    ['activationBits 8', { activationBits: 8 }],
    ['activationBits 16', { activationBits: 16 }],
  ];
  console.log(`${'dense'.padEnd(22)} ${dense.toFixed(1).padStart(7)} tok/s (×1.00)`);
  for (const [name, controls] of runs) {
    const rate = await decodeRate(model, controls);
    console.log(
      `${name.padEnd(22)} ${rate.toFixed(1).padStart(7)} tok/s (×${(rate / dense).toFixed(2)})`,
    );
  }

  // One token's gate and up projections, as a pruning kernel would run them.
  const { hidden_size: width, intermediate_size: inner } = config;
  const rng = new Rng(2);
  const x = tf.tensor2d(rng.normal(width), [1, width]);
  const gate = tf.tensor2d(rng.normal(inner * width), [inner, width]);
  const up = tf.tensor2d(rng.normal(inner * width), [inner, width]);
  const project = (input: tf.Tensor, g: tf.Tensor, u: tf.Tensor) =>
    tf.tidy(() => tf.add(tf.matMul(input, g, false, true), tf.matMul(input, u, false, true)));
  const denseMs = timeCalls(() => project(x, gate, up));
  const [gateT, upT] = [tf.transpose(gate), tf.transpose(up)];
  console.log(`gate+up of one token, dense: ${(denseMs * 1000).toFixed(1)} µs`);
  for (const rate of [0.5, 0.25]) {
    const kept = tf.tensor1d(
      Int32Array.from({ length: Math.ceil(rate * width) }, (_, i) => i * Math.floor(1 / rate)),
      'int32',
    );
    const gatheredMs = timeCalls(() =>
      tf.tidy(() =>
        project(tf.gather(x, kept, 1), tf.gather(gate, kept, 1), tf.gather(up, kept, 1)),
      ),
    );
    // The same weights stored transposed (`[D, I]`): a kept channel is a contiguous row.
    const rowsMs = timeCalls(() =>
      tf.tidy(() => {
        const input = tf.gather(x, kept, 1);
        return tf.add(
          tf.matMul(input, tf.gather(gateT, kept, 0)),
          tf.matMul(input, tf.gather(upT, kept, 0)),
        );
      }),
    );
    const pregathered = [tf.gather(gate, kept, 1), tf.gather(up, kept, 1)] as const;
    const idealMs = timeCalls(() =>
      tf.tidy(() => project(tf.gather(x, kept, 1), pregathered[0], pregathered[1])),
    );
    console.log(
      `  ρ ${rate}: kept columns gathered per token ${(gatheredMs * 1000).toFixed(1)} µs (×${(denseMs / gatheredMs).toFixed(2)}), ` +
        `kept rows of transposed weights gathered per token ${(rowsMs * 1000).toFixed(1)} µs (×${(denseMs / rowsMs).toFixed(2)}), ` +
        `columns already gathered ${(idealMs * 1000).toFixed(1)} µs (×${(denseMs / idealMs).toFixed(2)})`,
    );
    tf.dispose([kept, ...pregathered]);
  }
  tf.dispose([x, gate, up, gateT, upT]);
}

await main();
