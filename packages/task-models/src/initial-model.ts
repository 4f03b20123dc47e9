import { join } from 'node:path';
import { bareMessage, LetheError } from '@lethe/core';
import { canonicalJson, type JsonValue } from '@lethe/eval';
import {
  addLayers,
  CharTokenizer,
  CONFIG_FILE,
  DecoderModel,
  type ModelConfig,
  TOKENIZER_FILE,
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
  vocab_size: "the task tokenizer's vocabulary size",
};

/**
 * The model a run starts from: random weights from `settings.seed`, or with `settings.init`
 * the weights of that task-model directory (`loadTaskModel`), which must have the run's
 * tokenizer and config (architecture, vocabulary and every other field of `config`). The
 * task and its options may differ: that is fine-tuning, e.g. on longer prompts. A task model
 * with fewer layers than the run's and otherwise the same config is deepened: `addLayers` puts
 * the missing layers on top as the identity (their random matrices from `settings.seed`), and
 * `init.addedLayers` records how many.
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
  // Fewer layers than the run's are added on top; everything else must match.
  const added = Math.max(0, config.num_hidden_layers - loaded.model.config.num_hidden_layers);
  let model: DecoderModel;
  try {
    checkFits(
      loaded,
      { ...config, num_hidden_layers: config.num_hidden_layers - added },
      tokenizer,
    );
    model =
      added > 0 ? addLayers(loaded.model, config.num_hidden_layers, settings.seed) : loaded.model;
  } catch (error) {
    loaded.model.dispose();
    throw error;
  }
  if (model !== loaded.model) loaded.model.dispose();
  const recorded = loaded.manifest.training.init;
  return {
    model,
    init: {
      dir,
      command: loaded.manifest.command,
      ...(added === 0 ? {} : { addedLayers: added }),
      ...(recorded === undefined ? {} : { init: recorded }),
    },
  };
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
        `${join(loaded.dir, CONFIG_FILE)} has ${field} ${have}, the run ${want}${SETTING_OF[field] === undefined ? '' : ` (${SETTING_OF[field]})`}: fine-tuning needs the same architecture (or fewer layers, which the run adds on top)`,
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
