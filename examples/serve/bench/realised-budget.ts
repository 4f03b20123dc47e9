// What a request's budget holds its cache to (not a test): for prompts of 64 to 2,048 tokens and
// budgets of 10, 25 and 50 %, the realised budget (peak KV entries over the full cache's) the
// server reports for H2O — the prompt prefilled in chunks of up to 256 tokens (the default
// --prefill-chunk) that end where they would pass the budget's ceiling — against the same request
// run by generate() with the same chunks but no ceiling (what the server did before), and the
// time each request took.
//
//   npx tsx bench/realised-budget.ts            (from examples/serve)
import { fileURLToPath } from 'node:url';
import { createTask, type PerplexityTask, sequenceBudget } from '@lethe/eval';
import { generate, policyContextOf } from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { createDefaultRegistry } from '@lethe/policies';
import { initBackend } from '@lethe/tensor';
import { spawnServer } from '../test/spawn-server';

const LENGTHS = [64, 128, 256, 512, 1024, 2048] as const;
const BUDGETS = [0.1, 0.25, 0.5] as const;
const MAX_TOKENS = 16;
const CHUNK = 256;
const MODEL_DIR = fileURLToPath(new URL('../../../models/lm', import.meta.url));

/** A prompt of `length` characters (the task model's tokenizer: one token each) of LM documents. */
function promptOf(length: number): string {
  const task = createTask('lm') as PerplexityTask;
  let text = '';
  for (let i = 0; text.length < length; i++) text += task.document(9, i);
  return text.slice(0, length);
}

/** The same request through generate(): chunks of 256, the policy without its ceiling. */
async function unbounded(
  length: number,
  budget: number,
): Promise<{ realised: number; ms: number }> {
  const loaded = await readModelDirectory(MODEL_DIR);
  const prepared = await createDefaultRegistry().prepare('h2o');
  const prompt = loaded.tokenizer!.encode(promptOf(length));
  const { ceiling: _, ...policies } = prepared.build(
    sequenceBudget(budget, prompt.length + MAX_TOKENS, null, prepared.budgetForms),
    policyContextOf(loaded.model, 1),
  );
  const start = performance.now();
  const result = await generate({
    model: loaded.model,
    prompts: [prompt],
    maxNewTokens: MAX_TOKENS,
    sampling: { temperature: 0 },
    prefillChunk: CHUNK,
    ...policies,
  });
  const ms = performance.now() - start;
  const stats = result.stats.caches[0]!;
  const heads = loaded.model.config.num_hidden_layers * loaded.model.config.num_key_value_heads;
  loaded.model.dispose();
  // the full cache holds every token fed (the last generated one is never fed)
  const full = (prompt.length + result.tokens[0]!.length - 1) * heads;
  return { realised: stats.peakTotal / full, ms };
}

async function main(): Promise<void> {
  await initBackend('wasm');
  const server = await spawnServer(['--model', `lm=${MODEL_DIR}`]);
  console.log(
    `H2O on the lm task model, ${MAX_TOKENS} tokens per request, greedy, prompts prefilled in chunks of ≤ ${CHUNK} tokens`,
  );
  console.log(
    '| prompt tokens | budget | realised, server (bounded) | ms | realised, chunks alone (before) | ms |',
  );
  console.log('|--:|--:|--:|--:|--:|--:|');
  try {
    for (const length of LENGTHS) {
      for (const budget of BUDGETS) {
        const start = performance.now();
        const response = await fetch(`${server.url}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'lm',
            prompt: promptOf(length),
            max_tokens: MAX_TOKENS,
            temperature: 0,
            lethe: { policy: 'h2o', budget },
          }),
        });
        if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
        const body = (await response.json()) as { lethe: { cache: { realised_budget: number }[] } };
        const ms = performance.now() - start;
        const before = await unbounded(length, budget);
        const row = [
          length,
          budget,
          body.lethe.cache[0]!.realised_budget.toFixed(3),
          ms.toFixed(0),
          before.realised.toFixed(3),
          before.ms.toFixed(0),
        ];
        console.log(`| ${row.join(' | ')} |`);
      }
    }
  } finally {
    server.process.kill('SIGTERM');
  }
}

await main();
