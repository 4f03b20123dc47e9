// Rollouts in this thread vs on a worker pool: one training step's worth of Countdown rollouts
// (8 prompts × 8, ε = 0.5, the example's NGC settings) on models/countdown, timed with
// `collectRollouts` in process and with `workerPoolRollouts` on THREADS threads (default 2),
// checking that both give the same rollouts. The pool's first call (threads starting, wasm,
// model build) is reported apart; the ratio uses a later call, which like a training step
// rebuilds the model once per thread for a new snapshot version. Needs the build (the pool runs
// dist/train-rollout-worker.js) and as many idle cores as threads for a meaningful ratio.
//
//   pnpm --filter @lethe/policies-ngc build && THREADS=2 pnpm --filter @lethe/policies-ngc bench
import { fileURLToPath } from 'node:url';
import { CharTokenizer, DecoderModel } from '@lethe/model';
import { loadCheckpoint } from '@lethe/model/node';
import { initBackend } from '@lethe/tensor';
import { collectRollouts } from '../dist/train.js';
import { workerPoolRollouts } from '../dist/train-node.js';

const COUNTDOWN = fileURLToPath(new URL('../../../models/countdown', import.meta.url));
const ALPHABET = '0123456789+-*/=() ;:\n.abegmnrstuw';
const PROMPTS = 8;
const GROUP = 8;
const THREADS = Number(process.env.THREADS ?? 2);

await initBackend('wasm');
const checkpoint = await loadCheckpoint(COUNTDOWN);
const model = DecoderModel.fromTensors(checkpoint.config, checkpoint.tensors);
const tokenizer = new CharTokenizer(ALPHABET);
const requests = Array.from({ length: PROMPTS }, (_, p) => {
  const numbers = [3 + p, 7 + 2 * p, 12 + p];
  const prompt = tokenizer.encode(`numbers: ${numbers.join(' ')}\ntarget: ${30 + 3 * p}\n`, {
    addBos: true,
  });
  return Array.from({ length: GROUP }, (_, g) => ({
    prompt,
    stream: p * GROUP + g,
    evictionRate: 0.5,
  }));
}).flat();
const settings = {
  ngc: { cadence: 16, blockSize: 2, window: 5, logits: { kind: 'log', temperature: 1 } },
  maxNewTokens: 320,
  temperature: 0.9,
  stop: { eosTokenIds: [tokenizer.eosId], stopSequences: [tokenizer.encode('.')] },
  seed: 0,
};

async function timed(run) {
  const started = performance.now();
  const rollouts = await run();
  return { rollouts, seconds: (performance.now() - started) / 1000 };
}

await collectRollouts(requests.slice(0, GROUP), { ...settings, model }); // warm-up
const local = await timed(() => collectRollouts(requests, { ...settings, model }));
const pool = workerPoolRollouts(model, settings, { threads: THREADS });
try {
  const first = await timed(() => pool(requests, 0));
  const later = await timed(() => pool(requests, 1));
  const tokens = local.rollouts.reduce((sum, r) => sum + r.tokens.length, 0);
  const same = JSON.stringify(later.rollouts) === JSON.stringify(local.rollouts);
  console.log(
    `${requests.length} rollouts, ${tokens} tokens; in process ${local.seconds.toFixed(2)} s; ` +
      `${THREADS} threads: first call ${first.seconds.toFixed(2)} s, later ${later.seconds.toFixed(2)} s; ` +
      `speed-up ×${(local.seconds / later.seconds).toFixed(2)}; same rollouts: ${same}`,
  );
} finally {
  await pool.close();
  model.dispose();
}
