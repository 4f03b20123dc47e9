// The quickstart: load the embedded tiny model (or train a fresh one, 5–10 minutes on
// two CPU cores, with --retrain)
// and generate under each chosen KV-cache eviction policy, printing tokens/s and live/peak KV
// entries per layer.
import { existsSync } from 'node:fs';
import { type EvictionPolicy, fullCacheProvider, PolicyRegistry } from '@lethe/kv-cache';
import {
  type CharTokenizer,
  type DecoderModel,
  type GenerationResult,
  generate,
  policyContextOf,
} from '@lethe/model';
import { HEURISTIC_PROVIDERS } from '@lethe/policies-heuristic';
import { type BackendName, initBackend, LetheError } from '@lethe/tensor';
import { Command } from 'commander';
import { DEFAULT_CHECKPOINT, loadQuickstart } from './checkpoint-dir';
import { trainingBar } from './progress-bar';
import { formatCacheLine, formatSummaryRow } from './report';
import { trainQuickstartModel } from './train-model';

const registry = new PolicyRegistry([fullCacheProvider, ...HEURISTIC_PROVIDERS]);

const program = new Command()
  .name('quickstart')
  .description('Generate text with a tiny model under KV-cache eviction policies.')
  .option(
    '--policies <list>',
    `comma-separated: ${registry.names().join(', ')}`,
    'full,streaming-llm,h2o',
  )
  .option('--budget <n>', 'KV entries kept per head by evicting policies', (v) => Number(v), 64)
  .option('--tokens <n>', 'tokens to generate', (v) => Number(v), 400)
  .option('--prompt <text>', 'prompt', 'the cat ')
  .option('--temperature <t>', 'sampling temperature (0 = greedy)', (v) => Number(v), 0.7)
  .option('--seed <n>', 'sampling seed', (v) => Number(v), 1)
  .option('--backend <name>', 'wasm | cpu | webgpu | auto', 'wasm')
  .option('--checkpoint <dir>', 'model directory', DEFAULT_CHECKPOINT)
  .option('--retrain', 'train a fresh model first instead of loading the checkpoint')
  .option('--steps <n>', 'training steps with --retrain', (v) => Number(v), 400)
  // `pnpm start -- --flag` forwards the `--` separator; drop it so the flags still parse.
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));
const opts = program.opts<{
  policies: string;
  budget: number;
  tokens: number;
  prompt: string;
  temperature: number;
  seed: number;
  backend: BackendName;
  checkpoint: string;
  retrain?: boolean;
  steps: number;
}>();

/** The policy `name` at the budget, from the registry (its errors name `--policies`). */
async function policyFor(name: string, model: DecoderModel): Promise<EvictionPolicy | undefined> {
  registry.provider(name, '--policies');
  // Evict back to the budget once a head holds 1/4 more: amortised rounds.
  const prepared = await registry.prepare(name, {
    options: name === 'full' ? {} : { slackFraction: 0.25 },
  });
  return prepared.build({ capacity: opts.budget }, policyContextOf(model, 1)).eviction;
}

async function main(): Promise<void> {
  const backend = await initBackend(opts.backend);
  let loaded: { model: DecoderModel; tokenizer: CharTokenizer };
  if (opts.retrain || !existsSync(opts.checkpoint)) {
    console.log(
      opts.retrain
        ? 'training a fresh model (--retrain)'
        : `no checkpoint at ${opts.checkpoint}; training one`,
    );
    const bar = trainingBar(opts.steps);
    loaded = await trainQuickstartModel({ steps: opts.steps, onProgress: bar.update });
    bar.stop();
  } else {
    loaded = await loadQuickstart(opts.checkpoint);
  }
  const { model, tokenizer } = loaded;
  const c = model.config;
  console.log(
    `model: ${c.num_hidden_layers} layers, hidden ${c.hidden_size}, ${c.num_attention_heads} query / ${c.num_key_value_heads} KV heads, vocab ${c.vocab_size} | backend ${backend}`,
  );
  const prompt = tokenizer.encode(opts.prompt, { addBos: true });
  const summary: string[] = [];
  let fullPeak: number | undefined;
  for (const name of opts.policies.split(',').map((s) => s.trim())) {
    const eviction = await policyFor(name, loaded.model);
    const result: GenerationResult = await generate({
      model,
      prompts: [prompt],
      maxNewTokens: opts.tokens,
      eviction,
      sampling: { temperature: opts.temperature },
      seed: opts.seed,
      stop: { eosTokenIds: [tokenizer.eosId] },
    });
    const text = tokenizer.decode(result.tokens[0]!, { skipSpecialTokens: true });
    console.log(`\n── ${name}${eviction ? ` (budget ${opts.budget} entries per head)` : ''} ──`);
    console.log(`${opts.prompt}${text.length > 240 ? `${text.slice(0, 240)}…` : text}`);
    console.log(`${result.stats.tokensPerSecond.toFixed(1)} tok/s | ${formatCacheLine(result)}`);
    if (name === 'full') fullPeak = result.stats.caches[0]!.peakTotal;
    summary.push(formatSummaryRow(name, result, fullPeak));
  }
  console.log(`\n${summary.join('\n')}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof LetheError ? `error: ${error.message}` : error);
  process.exit(1);
});
