import { LetheError } from '@lethe/core';
import { type ActionLevels, ActionSet } from '../actions/action-set';
import {
  type ControllerFileConfig,
  decodeController,
  encodeController,
} from '../controller/controller-file';
import type { SolControllerParameters } from '../controller/controller-parameters';

/** File name of the controller's tensors in a SOL policy directory. */
export const SOL_TENSORS_FILE = 'controller.safetensors';

/** The base model a controller was trained on: what it reads (hidden states, token embeddings). */
export interface SolBaseModel {
  /** Hidden size of the base model (the controller's input size). */
  readonly hiddenSize: number;
  /** Vocabulary size of the base model. */
  readonly vocabSize: number;
}

/** The `parameters` of a SOL policy directory's `policy.json`. */
export interface SolManifestParameters {
  /** The controller's JSON config (sizes, format and version). */
  readonly controller: ControllerFileConfig;
  /** The action set it was trained on, as per-axis levels. */
  readonly actions: ActionLevels;
  /** The base model it was trained on. */
  readonly baseModel: SolBaseModel;
  /** The tensors file, relative to the directory. */
  readonly tensors: string;
}

/** A trained SOL controller with what it needs to run: its action set and base model. */
export interface SolTrained {
  readonly parameters: SolControllerParameters;
  readonly actions: ActionSet;
  readonly baseModel: SolBaseModel;
}

/**
 * The manifest `parameters` and tensor bytes of a trained controller, to write as a policy
 * directory: `policy.json` with `"provider": "sol"` and these parameters, and the bytes as
 * {@link SOL_TENSORS_FILE}.
 *
 * @throws LetheError `E_ARG` naming `trained.actions` when the action set's size is not the
 *   controller's action count, `trained.baseModel.hiddenSize` when it is not the controller's input
 *   size, `trained.baseModel.vocabSize` unless a positive integer; as `encodeController`.
 */
export function encodeSolPolicy(trained: SolTrained): {
  readonly parameters: SolManifestParameters;
  readonly tensors: Uint8Array;
} {
  const { config, tensors } = encodeController(trained.parameters);
  checkTrained(config, trained.actions, trained.baseModel, 'trained');
  return {
    parameters: {
      controller: config,
      actions: {
        tokenKeep: [...trained.actions.levels.tokenKeep],
        mlpInputKeep: [...trained.actions.levels.mlpInputKeep],
        activationBits: [...trained.actions.levels.activationBits],
      },
      baseModel: {
        hiddenSize: trained.baseModel.hiddenSize,
        vocabSize: trained.baseModel.vocabSize,
      },
      tensors: SOL_TENSORS_FILE,
    },
    tensors,
  };
}

/**
 * Reads a trained controller back from a manifest's `parameters` and the bytes of its tensors
 * file.
 *
 * @param location where the manifest is, for messages.
 * @param tensorsLocation where the tensors file is, for messages (default `tensors`, the
 *   argument).
 * @throws LetheError `E_FORMAT` naming `location` when `parameters` is not an object with
 *   `controller`, `actions`, `baseModel` and `tensors`; the action set's errors (naming
 *   `levels.<axis>`); as `decodeController`, its errors about the tensors naming
 *   `tensorsLocation`; `E_ARG` as {@link encodeSolPolicy} for an action set or base model that
 *   does not fit the controller.
 */
export function decodeSolPolicy(
  parameters: unknown,
  tensors: Uint8Array,
  location: string,
  tensorsLocation = 'tensors',
): SolTrained {
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new LetheError(
      'E_FORMAT',
      '"parameters" must be { controller, actions, baseModel, tensors }',
      location,
    );
  }
  const record = parameters as Record<string, unknown>;
  for (const field of ['controller', 'actions', 'baseModel']) {
    const value = record[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new LetheError('E_FORMAT', `"parameters.${field}" must be an object`, location);
    }
  }
  const controller = decodeController(record.controller, tensors, tensorsLocation);
  const actions = new ActionSet(record.actions as ActionLevels);
  const baseModel = record.baseModel as SolBaseModel;
  checkTrained(controller.config, actions, baseModel, 'parameters');
  return {
    parameters: controller,
    actions,
    baseModel: { hiddenSize: baseModel.hiddenSize, vocabSize: baseModel.vocabSize },
  };
}

function checkTrained(
  config: { readonly inputSize: number; readonly actions: number },
  actions: ActionSet,
  baseModel: SolBaseModel,
  argument: string,
): void {
  if (!(actions instanceof ActionSet) || actions.size !== config.actions) {
    throw new LetheError(
      'E_ARG',
      `must be an ActionSet of the controller's ${config.actions} actions`,
      `${argument}.actions`,
    );
  }
  if (typeof baseModel !== 'object' || baseModel === null) {
    throw new LetheError('E_ARG', 'must be { hiddenSize, vocabSize }', `${argument}.baseModel`);
  }
  if (baseModel.hiddenSize !== config.inputSize) {
    throw new LetheError(
      'E_ARG',
      `is ${baseModel.hiddenSize} but the controller reads inputs of size ${config.inputSize}`,
      `${argument}.baseModel.hiddenSize`,
    );
  }
  if (!(Number.isSafeInteger(baseModel.vocabSize) && baseModel.vocabSize >= 1)) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${baseModel.vocabSize}`,
      `${argument}.baseModel.vocabSize`,
    );
  }
}
