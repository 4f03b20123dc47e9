import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LetheError, withArgument } from '@lethe/core';
import type { Task } from '@lethe/eval';
import {
  capacityFor,
  encodeText,
  fullCacheLength,
  parseIntegerFlag,
  parseJsonFlag,
  parseNumberFlag,
  validateBudgetFraction,
} from '@lethe/eval';
import { FULL_CACHE, type PreparedPolicy } from '@lethe/kv-cache';
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
import { promptLines } from './prompt-lines';
import { unescapePrompt } from './prompt-text';
import { streamGeneration } from './streaming-generation';
import { tokenGlyphs } from './token-glyphs';

/** Generated tokens when neither `--tokens` nor a task bounds them. */
const DEFAULT_NEW_TOKENS = 200;

interface GenerateFlags {
  readonly model?: string;
  readonly policy: string;
  readonly policyOptions?: string;
  readonly policyDir?: string;
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
  readonly policy: PreparedPolicy;
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
      'Generate under an eviction policy, streaming the text, then show per layer which ' +
        'tokens the KV cache still holds (· = evicted). Without --prompt, reads prompts from ' +
        'stdin until EOF (interactively on a terminal).',
    )
    .option(
      '--model <dir>',
      'model directory (lethe pretrain output, or config.json + model.safetensors or its shards + tokenizer.json, e.g. a Hugging Face Llama / Qwen2 directory); not needed for a learned policy whose directory names its model (NGC)',
    )
    .option(
      '--policy <name>',
      'eviction policy: full or a registry name (`lethe policies` lists them)',
      FULL_CACHE,
    )
    .option('--policy-options <json>', 'policy options as a JSON object (see `lethe policies`)')
    .option('--policy-dir <dir>', 'directory of a learned policy (policy.json and its parameters)')
    .option(
      '--budget <b>',
      'budget fraction in (0, 1] of the full-cache length, prompt + --tokens (1 for full)',
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
      registry.provider(flags.policy, '--policy');
      const store = nodePolicyStore();
      // First: a learned provider may upload its parameters when it is prepared.
      await initBackend((flags.backend ?? 'wasm') as BackendName);
      const directory =
        flags.policyDir === undefined ? undefined : await store.open(flags.policyDir);
      const policy = await registry.prepare(flags.policy, {
        options: parseJsonFlag(flags.policyOptions, '--policy-options'),
        directory,
      });
      const budget = validateBudgetFraction(parseNumberFlag(flags.budget, '--budget'), '--budget');
      if (flags.policy === FULL_CACHE && budget !== 1) {
        throw new LetheError('E_BUDGET', `must be 1 for the full cache, got ${budget}`, '--budget');
      }
      const tokens =
        flags.tokens === undefined ? undefined : parseIntegerFlag(flags.tokens, '--tokens', 1);
      const seed = parseIntegerFlag(flags.seed, '--seed', 0);
      const temperature = temperatureFlag(flags.temperature);
      const modelDir =
        policy.model !== undefined && flags.policyDir !== undefined
          ? join(flags.policyDir, policy.model)
          : flags.model;
      if (modelDir === undefined) {
        throw new LetheError('E_ARG', 'is required (the policy names no model)', '--model');
      }
      const loaded = existsSync(join(modelDir, TASK_MODEL_FILE))
        ? await taskModelOf(modelDir)
        : { ...(await readModelDirectory(modelDir)), task: undefined };
      if (directory !== undefined) {
        await checkPolicyBaseModel(directory, loaded.model, modelDir).catch((error) => {
          loaded.model.dispose();
          policy.release();
          throw error;
        });
      }
      const generator: Generator = {
        model: loaded.model,
        tokenizer: loaded.tokenizer!,
        eosTokenIds: loaded.eosTokenIds,
        task: loaded.task,
        policy,
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
      try {
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
        policy.release();
      }
    });
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
  const capacity = capacityFor(g.budget, fullLength);
  const {
    eviction,
    ceiling,
    prompt: conditioning,
  } = g.policy.build({ capacity }, policyContextOf(model, 1));
  // A policy that conditions the prompt on its budget (NGC's interoception tag) rewrites it.
  const prompted = conditioning === undefined ? typed : conditioning.text(typed);
  const prompt = conditioning === undefined ? typedIds : encodePrompt(tokenizer, prompted);
  const tty = process.stdout.isTTY === true;
  const color = tty && process.env.NO_COLOR === undefined;
  console.log(
    g.policy.name === FULL_CACHE
      ? `policy full: no eviction (full-cache length ${fullLength} = prompt ${typedIds.length} + ${maxNewTokens} tokens)`
      : `policy ${g.policy.name}, budget ${g.budget}: ${capacity} entries per KV head (full-cache length ${fullLength} = prompt ${typedIds.length} + ${maxNewTokens} tokens)`,
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
    eviction,
    ceiling,
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
  console.log(
    `${result.tokensPerSecond.toFixed(1)} tok/s | finish: ${result.finishReason} | live/peak KV entries per layer: ${layers.join('  ')} | eviction rounds ${rounds}\n`,
  );
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
