import { join } from 'node:path';
import { bareMessage, LetheError } from '@lethe/core';
import { canonicalJson, type JsonValue } from '@lethe/eval';
import {
  addLayers,
  CharTokenizer,
  CONFIG_FILE,
  DecoderModel,
  type ModelConfig,
  type ModelWidths,
  TOKENIZER_FILE,
  widenModel,
} from '@lethe/model';
import { loadTaskModel } from './load-task-model';
import type { TaskModelInit } from './manifest';
import type { PretrainSettings } from './pretrain-settings';
import type { TaskModel, TaskTokenizer } from './read-task-model-files';

/** The weights a run starts from. */
export interface InitialModel {
  /** The model (the caller owns it: `dispose()` it when done). */
  readonly model: DecoderModel;
  /** The task model it was loaded from (`lethe-model.json`'s `training.init`), if any. */
  readonly init: TaskModelInit | undefined;
}

/** The setting behind each architectural config field, for the refusal message. */
const SETTING_OF: Readonly<Record<string, string>> = {
  hidden_size: 'modelSize.hidden',
  num_hidden_layers: 'modelSize.layers',
  num_attention_heads: 'modelSize.heads',
  num_key_value_heads: 'modelSize.kvHeads',
  intermediate_size: 'modelSize.intermediate',
  head_dim: 'modelSize.hidden / modelSize.heads',
  vocab_size: "the task tokenizer's vocabulary size",
};

/**
 * The model a run starts from: random weights from `settings.seed`, or with `settings.init`
 * the weights of that task-model directory (`loadTaskModel`), which must have the run's
 * tokenizer and config (architecture, vocabulary and every other field of `config`). The
 * task and its options may differ: that is fine-tuning, e.g. on longer prompts. A task model
 * narrower than the run's (hidden width, query or KV heads, MLP width, none wider and its head
 * width the run's) is widened first: `widenModel` adds the channels, heads and units, the
 * model's function kept (their random values from `settings.seed`), and `init.widenedFrom`
 * records its widths. A task model with fewer layers than the run's and otherwise the same
 * config is deepened: `addLayers` puts the missing layers on top as the identity (their random
 * matrices from `settings.seed`), and `init.addedLayers` records how many.
 *
 * @param config - the run's model config (`taskModelConfig`).
 * @param tokenizer - the run's task tokenizer.
 * @throws LetheError naming `init`: `E_ARG` when the tokenizer or config differs from the
 *   run's; the code of `loadTaskModel`'s error (`E_CHECKPOINT`, `E_FORMAT`, …), with the file
 *   in the message, when the directory is not a readable task model.
 */
export async function initialModel(
  settings: Pick<PretrainSettings, 'init' | 'seed'>,
  config: ModelConfig,
  tokenizer: TaskTokenizer,
): Promise<InitialModel> {
  if (settings.init === undefined) {
    return { model: DecoderModel.random(config, settings.seed), init: undefined };
  }
  const dir = settings.init;
  let loaded: TaskModel;
  try {
    loaded = await loadTaskModel(dir);
  } catch (error) {
    if (!(error instanceof LetheError)) throw error;
    const where = error.argument === undefined ? '' : `${error.argument}: `;
    throw new LetheError(
      error.code,
      `not a usable task model: ${where}${bareMessage(error)}`,
      'init',
    );
  }
  // Narrower widths are widened and fewer layers added on top; everything else must match.
  const added = Math.max(0, config.num_hidden_layers - loaded.model.config.num_hidden_layers);
  const theirs = widthsOf(loaded.model.config);
  const ours = widthsOf(config);
  const widened = narrowerWidths(theirs, ours) ? theirs : undefined;
  const models: DecoderModel[] = [loaded.model];
  try {
    checkFits(
      loaded,
      {
        ...config,
        ...configWidths(widened ?? ours),
        num_hidden_layers: config.num_hidden_layers - added,
      },
      tokenizer,
    );
    if (widened !== undefined) models.push(widenedStart(models.at(-1)!, ours, settings.seed, dir));
    if (added > 0) models.push(addLayers(models.at(-1)!, config.num_hidden_layers, settings.seed));
  } catch (error) {
    for (const model of models) model.dispose();
    throw error;
  }
  const model = models.pop()!;
  for (const earlier of models) earlier.dispose();
  const recorded = loaded.manifest.training.init;
  return {
    model,
    init: {
      dir,
      command: loaded.manifest.command,
      ...(added === 0 ? {} : { addedLayers: added }),
      ...(widened === undefined ? {} : { widenedFrom: widened }),
      ...(recorded === undefined ? {} : { init: recorded }),
    },
  };
}

/** `widenModel`, its refusal (a group size it cannot keep) named as the start's. */
function widenedStart(
  model: DecoderModel,
  widths: ModelWidths,
  seed: number,
  dir: string,
): DecoderModel {
  try {
    return widenModel(model, widths, seed);
  } catch (error) {
    if (!(error instanceof LetheError)) throw error;
    throw new LetheError(
      error.code,
      `${join(dir, CONFIG_FILE)} cannot be widened to the run's widths: ${error.argument}: ${bareMessage(error)}`,
      'init',
    );
  }
}

function widthsOf(config: ModelConfig): ModelWidths {
  return {
    hidden: config.hidden_size,
    heads: config.num_attention_heads,
    kvHeads: config.num_key_value_heads,
    intermediate: config.intermediate_size,
  };
}

function configWidths(widths: ModelWidths): Partial<ModelConfig> {
  return {
    hidden_size: widths.hidden,
    num_attention_heads: widths.heads,
    num_key_value_heads: widths.kvHeads,
    intermediate_size: widths.intermediate,
  };
}

/** Whether `theirs` is narrower than `ours` somewhere and wider nowhere. */
function narrowerWidths(theirs: ModelWidths, ours: ModelWidths): boolean {
  const keys = Object.keys(ours) as (keyof ModelWidths)[];
  return (
    keys.every((key) => theirs[key] <= ours[key]) && keys.some((key) => theirs[key] < ours[key])
  );
}

/** Refuses a loaded task model whose tokenizer or config is not `config` (the run's, at the depth it loads at). */
function checkFits(loaded: TaskModel, config: ModelConfig, tokenizer: TaskTokenizer): void {
  const theirs = canonicalJson(loaded.tokenizer.toJSON() as unknown as JsonValue);
  const ours = canonicalJson(tokenizer.toJSON() as unknown as JsonValue);
  if (theirs !== ours) {
    throw new LetheError(
      'E_ARG',
      `${join(loaded.dir, TOKENIZER_FILE)} is ${describeTokenizer(loaded.tokenizer)}, not the run's tokenizer ${describeTokenizer(tokenizer)}: the model was trained for another task`,
      'init',
    );
  }
  const given = loaded.model.config;
  for (const field of Object.keys(config)) {
    const want = canonicalJson((config[field] ?? null) as JsonValue);
    const have = canonicalJson((given[field] ?? null) as JsonValue);
    if (want !== have) {
      throw new LetheError(
        'E_ARG',
        `${join(loaded.dir, CONFIG_FILE)} has ${field} ${have}, the run ${want}${SETTING_OF[field] === undefined ? '' : ` (${SETTING_OF[field]})`}: fine-tuning needs the same architecture (or fewer layers, which the run adds on top, or narrower widths, which it widens)`,
        'init',
      );
    }
  }
}

/** A character tokenizer as its JSON; a Hugging Face one by kind and size (its JSON is long). */
function describeTokenizer(tokenizer: TaskTokenizer): string {
  if (tokenizer instanceof CharTokenizer) {
    return canonicalJson(tokenizer.toJSON() as unknown as JsonValue);
  }
  return `a Hugging Face tokenizer of ${tokenizer.vocabSize} ids`;
}
