// The quickstart: load the embedded tiny model (or the model directory given by --checkpoint)
// and generate under each chosen KV-cache eviction policy, printing tokens/s and live/peak KV
// entries per layer. Training is its own command: `npm run train` (src/train.ts).

import { LetheError } from '@lethe/core';
import {
  type EvictionPolicy,
  fullCacheProvider,
  MEMORY_BUDGET_FORMS,
  PolicyRegistry,
} from '@lethe/kv-cache';
import {
  type CharTokenizer,
  type DecoderModel,
  type GenerationResult,
  generate,
  policyContextOf,
} from '@lethe/model';
import { HEURISTIC_PROVIDERS } from '@lethe/policies-heuristic';
import { type BackendName, initBackend } from '@lethe/tensor';
import { Command, Option } from 'commander';
import { DEFAULT_CHECKPOINT, loadQuickstartFrom } from './checkpoint-dir';
import { formatCacheLine, formatSummaryRow } from './report';

/** The eviction heuristics, what a capacity builds (Quest, a read selector, takes read budgets). */
const registry = new PolicyRegistry([
  fullCacheProvider,
  ...HEURISTIC_PROVIDERS.filter((p) => (p.budgetForms ?? MEMORY_BUDGET_FORMS).includes('capacity')),
]);

/** `LetheError` codes that mean the input (flags, files) was wrong: exit 2, as `lethe` does. */
const INPUT_CODES = new Set(['E_ARG', 'E_BUDGET', 'E_FORMAT', 'E_CHECKPOINT']);

const program = new Command()
  .name('quickstart')
  .description('Generate text with a tiny model under KV-cache eviction policies.')
  .option(
    '--policies <list>',
    `comma-separated: ${registry.names().join(', ')}`,
    'full,streaming-llm,h2o',
  )
  .option(
    '--capacity <n>',
    'KV entries per head, the newest token included (rounds leave n − 1; a round runs once a head holds ⌈n/4⌉ more than n)',
    (v) => Number(v),
    64,
  )
  .option('--tokens <n>', 'tokens to generate', (v) => Number(v), 400)
  .option('--prompt <text>', 'prompt', 'the cat ')
  .option('--temperature <t>', 'sampling temperature (0 = greedy)', (v) => Number(v), 0.7)
  .option('--seed <n>', 'sampling seed', (v) => Number(v), 1)
  .option('--backend <name>', 'wasm | cpu | webgpu | auto', 'wasm')
  .option('--checkpoint <dir>', 'model directory (npm run train writes one)', DEFAULT_CHECKPOINT)
  // Flags of earlier versions, refused with what to use instead.
  .addOption(new Option('--budget <n>').hideHelp())
  .addOption(new Option('--retrain').hideHelp())
  .addOption(new Option('--steps <n>').hideHelp())
  // `pnpm start -- --flag` forwards the `--` separator; drop it so the flags still parse.
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));
const opts = program.opts<{
  policies: string;
  capacity: number;
  tokens: number;
  prompt: string;
  temperature: number;
  seed: number;
  backend: BackendName;
  checkpoint: string;
  budget?: string;
  retrain?: boolean;
  steps?: string;
}>();

/** Refuses the flags the quickstart no longer takes, and a capacity that is not one. */
function checkFlags(): void {
  if (opts.budget !== undefined) {
    throw new LetheError(
      'E_ARG',
      `the quickstart's budget is --capacity <entries per KV head> (--budget ${opts.budget}); in the lethe CLI --budget is a fraction of the full cache`,
      '--budget',
    );
  }
  if (opts.retrain !== undefined || opts.steps !== undefined) {
    throw new LetheError(
      'E_ARG',
      'training is its own command: `npm run train -- --steps <n> --out <dir>` in examples/quickstart, then --checkpoint <dir>',
      opts.retrain !== undefined ? '--retrain' : '--steps',
    );
  }
  if (!(Number.isInteger(opts.capacity) && opts.capacity >= 2)) {
    throw new LetheError(
      'E_BUDGET',
      `must be an integer ≥ 2 (entries per KV head), got ${opts.capacity}`,
      '--capacity',
    );
  }
}

/** The policy `name` at the capacity, from the registry (its errors name `--policies`). */
async function policyFor(name: string, model: DecoderModel): Promise<EvictionPolicy | undefined> {
  registry.provider(name, '--policies');
  // Evict back to capacity − 1 once a head holds a quarter more than the capacity: amortised rounds.
  const prepared = await registry.prepare(name, {
    options: name === 'full' ? {} : { slackFraction: 0.25 },
  });
  return prepared.build({ capacity: opts.capacity }, policyContextOf(model, 1)).eviction;
}

async function main(): Promise<void> {
  checkFlags();
  const backend = await initBackend(opts.backend);
  const loaded: { model: DecoderModel; tokenizer: CharTokenizer } = await loadQuickstartFrom(
    opts.checkpoint,
    '--checkpoint',
  );
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
    console.log(
      `\n── ${name}${eviction ? ` (capacity ${opts.capacity} entries per KV head)` : ''} ──`,
    );
    console.log(`${opts.prompt}${text.length > 240 ? `${text.slice(0, 240)}…` : text}`);
    console.log(`${result.stats.tokensPerSecond.toFixed(1)} tok/s | ${formatCacheLine(result)}`);
    if (name === 'full') fullPeak = result.stats.caches[0]!.peakTotal;
    summary.push(formatSummaryRow(name, result, fullPeak));
  }
  console.log(`\n${summary.join('\n')}`);
}

main().catch((error: unknown) => {
  if (error instanceof LetheError) {
    console.error(`error: ${error.message}`);
    process.exit(INPUT_CODES.has(error.code) ? 2 : 1);
  }
  console.error(error);
  process.exit(1);
});
