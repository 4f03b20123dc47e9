import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LetheError, withArgument } from '@lethe/core';
import type { Task } from '@lethe/eval';
import {
  encodeText,
  fullCacheLength,
  type PolicySpec,
  parseIntegerFlag,
  parseNumberFlag,
  policyFlagEntry,
  policyParts,
  policySpec,
  sequenceBudget,
  validateBudgetFraction,
} from '@lethe/eval';
import {
  COMPOSITION_SEPARATOR,
  type ComposedPolicy,
  composePolicies,
  FULL_CACHE,
  type PolicyBudget,
  type PolicyDirectory,
  type PolicyRegistry,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import {
  CharTokenizer,
  checkPolicyBaseModel,
  type DecoderModel,
  DecodeStream,
  policyContextOf,
  type StopConditions,
  type Tokenizer,
  validateSampling,
} from '@lethe/model';
import { readModelDirectory } from '@lethe/model/node';
import { createDefaultRegistry } from '@lethe/policies';
import { nodePolicyStore } from '@lethe/policies/node';
import { TASK_MODEL_FILE } from '@lethe/task-models';
import { loadTaskModel, type TaskModel } from '@lethe/task-models/node';
import { type BackendName, initBackend } from '@lethe/tensor';
import type { Command } from 'commander';
import { renderCacheHoldings } from './cache-holdings';
import { evalFlagOf, nameFlag } from './flag-errors';
import { promptLines } from './prompt-lines';
import { unescapePrompt } from './prompt-text';
import { streamGeneration } from './streaming-generation';
import { tokenGlyphs } from './token-glyphs';

/** A part of the policy, prepared, with the directory it was read from (learned parts). */
interface PreparedPart {
  readonly policy: PreparedPolicy;
  readonly directory?: PolicyDirectory;
  readonly dir: string | null;
}

/** Generated tokens when neither `--tokens` nor a task bounds them. */
const DEFAULT_NEW_TOKENS = 200;

interface GenerateFlags {
  readonly model?: string;
  readonly policy: string;
  readonly policyOptions?: string;
  readonly policyDir?: string;
  readonly partBudgets?: string;
  readonly budget: string;
  readonly prompt?: string;
  readonly tokens?: string;
  readonly seed: string;
  readonly temperature: string;
  readonly perHead?: boolean;
  readonly backend?: string;
}

/** What one generation needs, checked once. */
interface Generator {
  readonly model: DecoderModel;
  readonly tokenizer: Tokenizer;
  /** The ids that end a generation (the tokenizer's EOS, or the directory's). */
  readonly eosTokenIds: readonly number[];
  readonly task: Task | undefined;
  /** The policy's parts, composed (one part for a single policy). */
  readonly policy: ComposedPolicy;
  /** Per part, its own kept fraction, or null for `budget`. */
  readonly partBudgets: readonly (number | null)[];
  readonly budget: number;
  readonly tokens: number | undefined;
  readonly seed: number;
  readonly temperature: number;
  readonly perHead: boolean;
}

const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

/**
 * Adds `lethe generate`: loads a model directory (a task model, or any directory
 * `readModelDirectory` reads: `config.json`, `model.safetensors` or its shards, `tokenizer.json`
 * — a character tokenizer or a Hugging Face Llama / Qwen2 one), generates under an eviction policy
 * at a budget fraction of the full-cache length, streams the text, and then shows, one row per
 * layer, which tokens the KV cache still holds (evicted ones as `·`; colours only on a
 * terminal). Without `--prompt` it reads prompts line by line from stdin until EOF
 * (interactively, with a `lethe> ` prompt, on a terminal).
 */
export function addGenerateCommand(program: Command): void {
  program
    .command('generate')
    .summary('generate and show what the cache keeps')
    .description(
      'Generate under a policy (or a composition: h2o+sol-fixed), streaming the text, then show per layer which ' +
        'tokens the KV cache still holds (· = evicted). Without --prompt, reads prompts from ' +
        'stdin until EOF (interactively on a terminal).',
    )
    .option(
      '--model <dir>',
      'model directory (lethe pretrain output, or config.json + model.safetensors or its shards + tokenizer.json, e.g. a Hugging Face Llama / Qwen2 directory); not needed for a learned policy whose directory names its model (NGC)',
    )
    .option(
      '--policy <name>',
      'policy: full, a registry name (`lethe policies` lists them), or names joined by + for a composition (h2o+sol-fixed)',
      FULL_CACHE,
    )
    .option(
      '--policy-options <json>',
      "policy options as a JSON object (see `lethe policies`); for a composition, each part's by part name",
    )
    .option(
      '--policy-dir <dir>',
      'directory of a learned policy (policy.json and its parameters); for a composition, a JSON object of directories by part name',
    )
    .option(
      '--part-budgets <json>',
      'for a composition, a JSON object of the kept fractions some parts always run at, by part name (default: --budget)',
    )
    .option(
      '--budget <b>',
      'budget fraction in (0, 1] of the full-cache length, prompt + --tokens (1 for full): the entries kept, or read per step (Quest), or the compute targets (SOL)',
      '1',
    )
    .option('--prompt <text>', 'prompt text; \\n is a newline (task prompts end with one)')
    .option(
      '--tokens <n>',
      `most tokens to generate (default: the task's answer allowance, else ${DEFAULT_NEW_TOKENS})`,
    )
    .option('--seed <n>', 'sampling and eviction seed', '0')
    .option('--temperature <t>', 'sampling temperature, 0 = greedy', '0')
    .option('--per-head', 'one row per KV head instead of one per layer')
    .option('--backend <name>', 'tfjs backend: wasm (default), cpu, webgpu, auto')
    .action(async (flags: GenerateFlags) => {
      const registry = createDefaultRegistry();
      const spec = policyOfFlags(flags, registry);
      const store = nodePolicyStore();
      // First: a learned provider may upload its parameters when it is prepared.
      await initBackend((flags.backend ?? 'wasm') as BackendName);
      const parts = policyParts(spec);
      const prepared: PreparedPart[] = [];
      try {
        for (const [j, part] of parts.entries()) {
          try {
            const directory = part.dir === null ? undefined : await store.open(part.dir);
            const policy = await registry.prepare(part.name, { options: part.options, directory });
            prepared.push({
              policy,
              dir: part.dir,
              ...(directory === undefined ? {} : { directory }),
            });
          } catch (error) {
            throw nameFlag(spec.compose === undefined ? error : partError(error, j), evalFlagOf);
          }
        }
      } catch (error) {
        for (const p of prepared) p.policy.release();
        throw error;
      }
      const policy = composePolicies(prepared.map((p) => p.policy));
      try {
        await generateWith(flags, spec, policy, prepared);
      } finally {
        policy.release();
      }
    });
}

/**
 * The policy the flags name — a provider, or names joined by `+` for a composition — checked
 * against the registry, with errors naming the flags.
 *
 * @throws LetheError `E_ARG` naming `--policy` for an unknown name, the flag of a malformed
 *   option, directory or part budget (see `policyFlagEntry`, `policySpec`).
 */
function policyOfFlags(flags: GenerateFlags, registry: PolicyRegistry): PolicySpec {
  for (const name of flags.policy.split(COMPOSITION_SEPARATOR)) {
    if (name !== '') registry.provider(name, '--policy');
  }
  try {
    return policySpec(
      policyFlagEntry({
        policy: flags.policy,
        options: flags.policyOptions,
        dir: flags.policyDir,
        partBudgets: flags.partBudgets,
      }),
      'policies[0]',
      registry.names(),
    );
  } catch (error) {
    throw nameFlag(error, evalFlagOf);
  }
}

/** A part's registry error (`options.<key>`, `policyDir`) about `policies[0].compose[j]`. */
function partError(error: unknown, j: number): unknown {
  if (!(error instanceof LetheError) || error.argument === undefined) return error;
  const field = error.argument === 'policyDir' ? 'dir' : error.argument;
  if (field !== 'dir' && field !== 'options' && !field.startsWith('options.')) return error;
  return withArgument(error, `policies[0].compose[${j}].${field}`);
}

/** Loads the model, then generates from `--prompt` or from every line of stdin. */
async function generateWith(
  flags: GenerateFlags,
  spec: PolicySpec,
  policy: ComposedPolicy,
  prepared: readonly PreparedPart[],
): Promise<void> {
  const budget = validateBudgetFraction(parseNumberFlag(flags.budget, '--budget'), '--budget');
  if (spec.name === FULL_CACHE && budget !== 1) {
    throw new LetheError('E_BUDGET', `must be 1 for the full cache, got ${budget}`, '--budget');
  }
  const tokens =
    flags.tokens === undefined ? undefined : parseIntegerFlag(flags.tokens, '--tokens', 1);
  const seed = parseIntegerFlag(flags.seed, '--seed', 0);
  const temperature = temperatureFlag(flags.temperature);
  const owner = prepared.find((p) => p.policy.model !== undefined && p.dir !== null);
  const modelDir = owner === undefined ? flags.model : join(owner.dir!, owner.policy.model!);
  if (modelDir === undefined) {
    throw new LetheError('E_ARG', 'is required (the policy names no model)', '--model');
  }
  const loaded = existsSync(join(modelDir, TASK_MODEL_FILE))
    ? await taskModelOf(modelDir)
    : { ...(await readModelDirectory(modelDir)), task: undefined };
  try {
    for (const p of prepared) {
      if (p.directory !== undefined)
        await checkPolicyBaseModel(p.directory, loaded.model, modelDir);
    }
    const generator: Generator = {
      model: loaded.model,
      tokenizer: loaded.tokenizer!,
      eosTokenIds: loaded.eosTokenIds,
      task: loaded.task,
      policy,
      partBudgets: policyParts(spec).map((part) => part.budget),
      budget,
      tokens,
      seed,
      temperature,
      perHead: flags.perHead ?? false,
    };
    const c = loaded.model.config;
    console.log(
      `model: ${modelDir}${loaded.task ? ` (${loaded.task.name} task model)` : ''}: ${c.num_hidden_layers} layers, hidden ${c.hidden_size}, ${c.num_attention_heads} query / ${c.num_key_value_heads} KV heads`,
    );
    if (flags.prompt !== undefined) {
      await generateOne(generator, flags.prompt);
    } else {
      const interactive = process.stdin.isTTY === true;
      for await (const line of promptLines(process.stdin, process.stdout, interactive)) {
        if (line.trim() === '') continue;
        try {
          await generateOne(generator, line);
        } catch (error) {
          if (!(error instanceof LetheError)) throw error;
          process.stderr.write(`lethe: ${error.message}\n`);
        }
      }
    }
  } finally {
    loaded.model.dispose();
  }
}

/** A task model, with its tokenizer's EOS as the ids that end a generation. */
async function taskModelOf(
  dir: string,
): Promise<TaskModel & { readonly eosTokenIds: readonly number[] }> {
  const loaded = await loadTaskModel(dir);
  const eos = loaded.tokenizer.eosId;
  return { ...loaded, eosTokenIds: [eos] };
}

/**
 * Token ids of a prompt (BOS first when the tokenizer has one).
 *
 * @throws LetheError `E_ARG` naming `--prompt` for a character outside the alphabet of a
 *   character tokenizer.
 */
function encodePrompt(tokenizer: Tokenizer, text: string): Int32Array {
  const prompt = encodeText(tokenizer, text);
  if (!(tokenizer instanceof CharTokenizer)) return prompt;
  const unknown = prompt.indexOf(tokenizer.unkId);
  if (unknown >= 0) {
    const char = Array.from(text)[unknown - (tokenizer.bosId === undefined ? 0 : 1)];
    throw new LetheError(
      'E_ARG',
      `character ${JSON.stringify(char)} is not in the model's alphabet ${JSON.stringify(tokenizer.alphabet.join(''))}`,
      '--prompt',
    );
  }
  return prompt;
}

/** Generates from one prompt, streaming it, then prints the cache holdings and stats. */
async function generateOne(g: Generator, raw: string): Promise<void> {
  const { tokenizer, model, task } = g;
  const typed = unescapePrompt(raw);
  const typedIds = encodePrompt(tokenizer, typed);
  const maxNewTokens =
    g.tokens ?? (task?.kind === 'generation' ? task.maxNewTokens : DEFAULT_NEW_TOKENS);
  const fullLength = fullCacheLength(typedIds.length, maxNewTokens);
  const budgets = g.policy.parts.map((part, i) =>
    sequenceBudget(g.partBudgets[i] ?? g.budget, fullLength, null, part.budgetForms),
  );
  const { prompt: conditioning, ...policies } = g.policy.build(budgets, policyContextOf(model, 1));
  // A policy that conditions the prompt on its budget (NGC's interoception tag) rewrites it.
  const prompted = conditioning === undefined ? typed : conditioning.text(typed);
  const prompt = conditioning === undefined ? typedIds : encodePrompt(tokenizer, prompted);
  const tty = process.stdout.isTTY === true;
  const color = tty && process.env.NO_COLOR === undefined;
  console.log(
    g.policy.name === FULL_CACHE
      ? `policy full: no eviction (full-cache length ${fullLength} = prompt ${typedIds.length} + ${maxNewTokens} tokens)`
      : `policy ${g.policy.name}, budget ${g.budget}: ${budgets.map(describeBudget).join('; ')} (full-cache length ${fullLength} = prompt ${typedIds.length} + ${maxNewTokens} tokens)`,
  );
  const stop: StopConditions = {
    eosTokenIds: g.eosTokenIds,
    stopSequences:
      task?.kind === 'generation' && task.stopText !== '' ? [tokenizer.encode(task.stopText)] : [],
  };
  process.stdout.write('\n');
  process.stdout.write(color ? `${DIM}${prompted}${RESET}` : prompted);
  const stream = new DecodeStream(tokenizer, { skipSpecialTokens: true });
  const result = await streamGeneration({
    model,
    prompt,
    maxNewTokens,
    policies,
    sampling: { temperature: g.temperature },
    seed: g.seed,
    stop,
    onToken: (token) => {
      process.stdout.write(stream.step(token));
    },
  });
  process.stdout.write(`${stream.flush()}\n\n`);
  console.log(
    `KV cache after ${result.fed.length} tokens (${EVICTED_LEGEND}${color ? '; yellow: held by some KV heads only' : ''}):`,
  );
  const columns = tty ? (process.stdout.columns ?? 100) : Number.POSITIVE_INFINITY;
  const lines = renderCacheHoldings(result.cache, tokenGlyphs(tokenizer, result.fed), {
    color,
    perHead: g.perHead,
    width: columns - 20,
  });
  for (const line of lines) console.log(line);
  const stats = result.cache.stats();
  const layers = Array.from(
    stats.livePerLayer,
    (live, l) => `L${l} ${live}/${stats.peakPerLayer[l]}`,
  );
  const rounds = stats.evictionRounds.reduce((a, b) => a + b, 0);
  const { reads, compute } = result;
  const readShare =
    reads.live > 0 && reads.entries < reads.live
      ? ` | decode read ${reads.entries} of ${reads.live} held entries (${((100 * reads.entries) / reads.live).toFixed(1)}%)`
      : '';
  const computeShare =
    compute.steps > 0
      ? ` | compute asked: tokenKeep ${compute.tokenKeep.toFixed(3)}, mlpInputKeep ${compute.mlpInputKeep.toFixed(3)}, precision ${compute.precision.toFixed(3)}`
      : '';
  console.log(
    `${result.tokensPerSecond.toFixed(1)} tok/s | finish: ${result.finishReason} | live/peak KV entries per layer: ${layers.join('  ')} | eviction rounds ${rounds}${readShare}${computeShare}\n`,
  );
}

const EVICTED_LEGEND = '· = evicted by every KV head';

/** What a part's budget allows, in words. */
function describeBudget(budget: PolicyBudget): string {
  if ('capacity' in budget) return `${budget.capacity} entries per KV head`;
  if ('readTokens' in budget) return `reads ${budget.readTokens} entries per KV head and step`;
  if ('targets' in budget) {
    const t = budget.targets;
    return `compute targets tokenKeep ${t.tokenKeep}, mlpInputKeep ${t.mlpInputKeep}, precision ${t.precision}`;
  }
  return `keeps ${budget.keepRatio} every ${budget.every} tokens`;
}

/**
 * The sampling temperature of `--temperature`: a decimal number that `@lethe/model` accepts as a
 * temperature (finite, ≥ 0).
 *
 * @throws LetheError `E_ARG` naming `--temperature` otherwise.
 */
function temperatureFlag(text: string): number {
  const temperature = parseNumberFlag(text, '--temperature');
  try {
    validateSampling({ temperature });
  } catch (error) {
    throw error instanceof LetheError ? withArgument(error, '--temperature') : error;
  }
  return temperature;
}
