// Where a trained gate ranks the needle's value digits, per layer and KV head, on held-out
// retrieval prompts (task seed 0): the diagnostic behind the study's strict-budget results. A
// budgeted GSA cache keeps the highest gates, so a digit ranked below the budget is evicted.
//   npm run needle-ranks -- --model ../../models/retrieval --policy ../../models/gsa-retrieval

import { LetheError } from '@lethe/core';
import { encodeText, type GenerationTask } from '@lethe/eval';
import { runMain } from '@lethe/eval/node';
import { nodePolicyStore } from '@lethe/policies/node';
import { gsaProvider } from '@lethe/policies-gsa';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend, tf } from '@lethe/tensor';
import { Command } from 'commander';
import { integer, number } from './cli-values';

const program = new Command()
  .name('gsa-needle-ranks')
  .description("Rank of the needle's value digits among a prompt's gates, per layer and KV head.")
  .requiredOption('--model <dir>', 'retrieval task model')
  .requiredOption('--policy <dir>', 'GSA policy directory')
  .option('--examples <n>', 'held-out prompts (task seed 0)', integer, 32)
  .option('--keep <x>', 'fraction of the prompt a budget keeps', number, 0.5)
  .parse(process.argv.filter((arg, i) => !(i === 2 && arg === '--')));

const o = program.opts();

await runMain(async () => {
  await initBackend('wasm');
  const { model, task, tokenizer } = await loadTaskModel(o.model);
  if (task.name !== 'retrieval') {
    throw new LetheError('E_ARG', `must be a retrieval task model, got ${task.name}`, '--model');
  }
  // The provider's own loader: the manifest and tensors checked, the gate uploaded once.
  const { gate } = await gsaProvider.learned!.load(await nodePolicyStore().open(o.policy));
  const { num_hidden_layers: layers, num_key_value_heads: heads } = model.config;
  // Per (layer, head): the digits' rank percentiles, and the prompts whose digits all stay.
  const percentiles = Array.from({ length: layers * heads }, () => [] as number[]);
  const kept = new Array<number>(layers * heads).fill(0);
  for (let i = 0; i < o.examples; i++) {
    const example = (task as GenerationTask).example(0, i);
    const value = (example.data.values as string[])[0]!;
    const at = example.prompt.indexOf(value, example.data.needleStart as number);
    const ids = encodeText(tokenizer, example.prompt);
    // The character tokenizer puts BOS first: character c is token c + 1.
    const digits = Array.from(value, (_, d) => at + d + 1);
    const logGates: number[][][] = [];
    const inputs = tf.tensor2d(ids, [1, ids.length], 'int32');
    const result = model.forward(inputs, {
      keyBias: (l, x) => {
        const bias = gate.logGates(l, x);
        logGates[l] = (bias.arraySync() as number[][][])[0]!;
        return bias;
      },
    });
    tf.dispose([inputs, result.logits]);
    const budget = Math.ceil(o.keep * ids.length);
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const g = logGates[l]![h]!;
        const ranks = digits.map((t) => g.filter((v) => v > g[t]!).length);
        for (const r of ranks) percentiles[l * heads + h]!.push(r / ids.length);
        if (ranks.every((r) => r < budget)) kept[l * heads + h]!++;
      }
    }
  }
  console.log(
    `| layer | KV head | median rank of a digit (0 = highest gate) | prompts whose digits all rank in the top ${Math.round(o.keep * 100)} % |`,
  );
  console.log('|--:|--:|--:|--:|');
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      const sorted = [...percentiles[l * heads + h]!].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      console.log(
        `| ${l} | ${h} | ${(100 * median).toFixed(1)} % | ${kept[l * heads + h]} / ${o.examples} |`,
      );
    }
  }
  gate.dispose();
  model.dispose();
});
