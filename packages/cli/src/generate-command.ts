import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LetheError, withArgument } from '@lethe/core';
import type { Task } from '@lethe/eval';
import {
  encodePrompt,
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
  describeBudget,
  FULL_CACHE,
  type PolicyDirectory,
  type PolicyRegistry,
  type PolicySet,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import {
  checkPolicyBaseModel,
  type DecoderModel,
  DecodeStream,
  policyContextOf,
  type StopConditions,
  type Tokenizer,
  tokenGlyphs,
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
import { type GenerationRecord, type GenerationSetup, generationRecord } from './generation-record';
import { promptLines } from './prompt-lines';
import { unescapePrompt } from './prompt-text';
import { type StreamGenerationResult, streamGeneration } from './streaming-generation';

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
  readonly policyTransfer?: string;
  readonly budget: string;
  readonly prompt?: string;
  readonly tokens?: string;
  readonly seed: string;
  readonly temperature: string;
  readonly perHead?: boolean;
  readonly json?: boolean;
  readonly backend?: string;
}

/** What one generation needs, checked once. */
interface Generator {
  /** The model directory the model was read from. */
  readonly modelDir: string;
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
  /** One JSON line per prompt (`--json`) instead of the text and holdings. */
  readonly json: boolean;
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
 * (interactively, with a `lethe> ` prompt, on a terminal). With `--json` it prints, per prompt,
 * one line on stdout instead: a {@link GenerationRecord} as JSON.
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
      '--policy-transfer <bool>',
      'true: run the learned policy on --model though it was trained on another (zero-shot transfer; default false)',
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
    .option(
      '--json',
      'print per prompt one JSON line on stdout and nothing else (errors still go to stderr): ' +
        '{model, task (or null), policy, budget, budgets (per part: {capacity} | {readTokens} | {targets} | {keepRatio, every}), ' +
        'fullCacheLength, prompt (as fed), promptTokens, text, tokens (ids), finishReason, livePerLayer (summed over KV heads), ' +
        'peakPerLayer, livePerHead ([layer][kvHead]), evictionRounds (total), held ([layer][kvHead]: positions held, ascending), ' +
        'reads {entries, live}, compute ({steps, tokenKeep, mlpInputKeep, precision} or null), tokensPerSecond}',
    )
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
        transfer: flags.policyTransfer,
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
      // A transferred policy runs on this model; one that is a model (NGC) runs its own.
      if (p.directory !== undefined && (spec.transfer !== true || p === owner))
        await checkPolicyBaseModel(p.directory, loaded.model, modelDir);
    }
    const generator: Generator = {
      modelDir,
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
      json: flags.json ?? false,
    };
    const c = loaded.model.config;
    if (!generator.json) {
      console.log(
        `model: ${modelDir}${loaded.task ? ` (${loaded.task.name} task model)` : ''}: ${c.num_hidden_layers} layers, hidden ${c.hidden_size}, ${c.num_attention_heads} query / ${c.num_key_value_heads} KV heads`,
      );
    }
    if (flags.prompt !== undefined) {
      await generateOne(generator, flags.prompt);
    } else {
      const interactive = process.stdin.isTTY === true;
      // with --json, stdout carries the JSON lines alone: the `lethe> ` prompt goes to stderr
      const echo = generator.json ? process.stderr : process.stdout;
      for await (const line of promptLines(process.stdin, echo, interactive)) {
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

/** One prompt, ready to generate from. */
interface PromptRun {
  /** What the record says before generating. */
  readonly setup: GenerationSetup;
  /** Tokens of the typed prompt (before any prompt conditioning). */
  readonly typedTokens: number;
  readonly maxNewTokens: number;
  /** The token ids fed: `setup.prompt` encoded. */
  readonly ids: Int32Array;
  readonly policies: PolicySet;
  readonly stop: StopConditions;
}

/**
 * Unescapes and encodes a prompt, and builds the policy under budgets of the full-cache length.
 *
 * @throws LetheError `E_ARG` naming `--prompt` for a character outside the model's alphabet.
 */
function preparePrompt(g: Generator, raw: string): PromptRun {
  const { tokenizer, model, task } = g;
  const typed = unescapePrompt(raw);
  const typedIds = encodePrompt(tokenizer, typed, '--prompt');
  const maxNewTokens =
    g.tokens ?? (task?.kind === 'generation' ? task.maxNewTokens : DEFAULT_NEW_TOKENS);
  const fullLength = fullCacheLength(typedIds.length, maxNewTokens);
  const budgets = g.policy.parts.map((part, i) =>
    sequenceBudget(g.partBudgets[i] ?? g.budget, fullLength, null, part.budgetForms),
  );
  const { prompt: conditioning, ...policies } = g.policy.build(budgets, policyContextOf(model, 1));
  // A policy that conditions the prompt on its budget (NGC's interoception tag) rewrites it.
  const prompted = conditioning === undefined ? typed : conditioning.text(typed);
  const ids = conditioning === undefined ? typedIds : encodePrompt(tokenizer, prompted, '--prompt');
  const stop: StopConditions = {
    eosTokenIds: g.eosTokenIds,
    stopSequences:
      task?.kind === 'generation' && task.stopText !== '' ? [tokenizer.encode(task.stopText)] : [],
  };
  const setup: GenerationSetup = {
    model: g.modelDir,
    task: task?.name ?? null,
    policy: g.policy.name,
    budget: g.budget,
    budgets,
    fullCacheLength: fullLength,
    prompt: prompted,
    promptTokens: ids.length,
  };
  return { setup, typedTokens: typedIds.length, maxNewTokens, ids, policies, stop };
}

/**
 * Generates from a prepared prompt, passing the text to `onText` as it is decoded, and returns
 * its record with the generation's result (its cache, the tokens it fed).
 */
async function runPrompt(
  g: Generator,
  run: PromptRun,
  onText: (text: string) => void,
): Promise<{ readonly record: GenerationRecord; readonly result: StreamGenerationResult }> {
  const stream = new DecodeStream(g.tokenizer, { skipSpecialTokens: true });
  let text = '';
  const emit = (piece: string): void => {
    text += piece;
    onText(piece);
  };
  const result = await streamGeneration({
    model: g.model,
    prompt: run.ids,
    maxNewTokens: run.maxNewTokens,
    policies: run.policies,
    sampling: { temperature: g.temperature },
    seed: g.seed,
    stop: run.stop,
    onToken: (token) => emit(stream.step(token)),
  });
  emit(stream.flush());
  return { record: generationRecord(run.setup, text, result), result };
}

/** Generates from one prompt: one JSON line with `--json`, else the streamed text and holdings. */
function generateOne(g: Generator, raw: string): Promise<void> {
  return g.json ? printJsonGeneration(g, raw) : printGeneration(g, raw);
}

/** Generates from one prompt and prints its {@link GenerationRecord} as one JSON line. */
async function printJsonGeneration(g: Generator, raw: string): Promise<void> {
  const { record } = await runPrompt(g, preparePrompt(g, raw), () => {});
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

/** Generates from one prompt, streaming it, then prints the cache holdings and stats. */
async function printGeneration(g: Generator, raw: string): Promise<void> {
  const run = preparePrompt(g, raw);
  const tty = process.stdout.isTTY === true;
  const color = tty && process.env.NO_COLOR === undefined;
  console.log(policyLine(g, run));
  const prompted = run.setup.prompt;
  process.stdout.write('\n');
  process.stdout.write(color ? `${DIM}${prompted}${RESET}` : prompted);
  const { record, result } = await runPrompt(g, run, (text) => {
    process.stdout.write(text);
  });
  process.stdout.write('\n\n');
  console.log(
    `KV cache after ${result.fed.length} tokens (${EVICTED_LEGEND}${color ? '; yellow: held by some KV heads only' : ''}):`,
  );
  const columns = tty ? (process.stdout.columns ?? 100) : Number.POSITIVE_INFINITY;
  const lines = renderCacheHoldings(result.cache, tokenGlyphs(g.tokenizer, result.fed), {
    color,
    perHead: g.perHead,
    width: columns - 20,
  });
  for (const line of lines) console.log(line);
  console.log(statsLine(record));
}

/** The line naming the policy, its budgets and the full-cache length. */
function policyLine(g: Generator, run: PromptRun): string {
  const { budgets, fullCacheLength: full } = run.setup;
  const length = `full-cache length ${full} = prompt ${run.typedTokens} + ${run.maxNewTokens} tokens`;
  return g.policy.name === FULL_CACHE
    ? `policy full: no eviction (${length})`
    : `policy ${g.policy.name}, budget ${g.budget}: ${budgets.map(describeBudget).join('; ')} (${length})`;
}

/** The last line: speed, finish reason, live/peak entries per layer, rounds, reads, compute. */
function statsLine(record: GenerationRecord): string {
  const layers = record.livePerLayer.map((live, l) => `L${l} ${live}/${record.peakPerLayer[l]}`);
  const { reads, compute } = record;
  const readShare =
    reads.live > 0 && reads.entries < reads.live
      ? ` | decode read ${reads.entries} of ${reads.live} held entries (${((100 * reads.entries) / reads.live).toFixed(1)}%)`
      : '';
  const computeShare =
    compute !== null
      ? ` | compute asked: tokenKeep ${compute.tokenKeep.toFixed(3)}, mlpInputKeep ${compute.mlpInputKeep.toFixed(3)}, precision ${compute.precision.toFixed(3)}`
      : '';
  return `${record.tokensPerSecond.toFixed(1)} tok/s | finish: ${record.finishReason} | live/peak KV entries per layer: ${layers.join('  ')} | eviction rounds ${record.evictionRounds}${readShare}${computeShare}\n`;
}

const EVICTED_LEGEND = '· = evicted by every KV head';

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
