import { LetheError } from '@lethe/core';
import { isComputeBudget, type PolicyModelShape, type PolicyProvider } from '@lethe/kv-cache';
import * as v from 'valibot';
import type { ActionSet } from '../actions/action-set';
import { DEFAULT_SAMPLING_TEMPERATURE } from '../controller/action-choice';
import { SolController } from '../controller/sol-controller';
import { decodeSolPolicy, type SolBaseModel } from './sol-directory';
import { SolPolicy } from './sol-policy';

/** Episode length `T` unless told otherwise (the paper's main setting). */
export const SOL_DEFAULT_HORIZON = 16;
/** Entries always read densely unless told otherwise: 4 sinks + a 2-token window (App. B). */
export const SOL_DEFAULT_ALWAYS_DENSE = 6;

const SOL_OPTIONS = v.strictObject({
  horizon: v.pipe(
    v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), SOL_DEFAULT_HORIZON),
    v.description(
      `decode steps per episode T: the controller restarts and the KV entries of the episode are refreshed densely after each (the paper: ${SOL_DEFAULT_HORIZON}; at most the controller's maxHorizon)`,
    ),
  ),
  sampling: v.pipe(
    v.optional(
      v.union([
        v.literal('greedy'),
        v.strictObject({ temperature: v.pipe(v.number(), v.gtValue(0)) }),
      ]),
      'greedy',
    ),
    v.description(
      `"greedy" (evaluation, the paper's default) or { "temperature": t } to sample actions (training uses ${DEFAULT_SAMPLING_TEMPERATURE})`,
    ),
  ),
  refresh: v.pipe(
    v.optional(v.boolean(), true),
    v.description('recompute each episode’s KV entries densely when it ends (§4)'),
  ),
  alwaysDense: v.pipe(
    v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), SOL_DEFAULT_ALWAYS_DENSE),
    v.description(
      'entries always read densely (sinks + window): a step with no more live entries does not count toward the budget',
    ),
  ),
});

/** What the SOL provider loads from a policy directory. */
export interface SolLoaded {
  /** The controller, shared by every policy built from this load (its state is per sequence). */
  readonly controller: SolController;
  /** The action set it was trained on. */
  readonly actions: ActionSet;
  /** The base model it was trained on. */
  readonly baseModel: SolBaseModel;
}

/**
 * Refuses a controller trained on another base model.
 *
 * @throws LetheError `E_ARG` naming `parameters.baseModel.hiddenSize` or
 *   `parameters.baseModel.vocabSize` when it differs from the model's, `context.model.vocabSize`
 *   when the runtime does not give it.
 */
function checkBaseModel(baseModel: SolBaseModel, model: PolicyModelShape): void {
  if (baseModel.hiddenSize !== model.hiddenSize) {
    throw new LetheError(
      'E_ARG',
      `the controller was trained on a model of hidden size ${baseModel.hiddenSize}, but this one has ${model.hiddenSize}`,
      'parameters.baseModel.hiddenSize',
    );
  }
  if (model.vocabSize === undefined) {
    throw new LetheError(
      'E_ARG',
      'is not given: SOL checks that its controller was trained on this vocabulary',
      'context.model.vocabSize',
    );
  }
  if (baseModel.vocabSize !== model.vocabSize) {
    throw new LetheError(
      'E_ARG',
      `the controller was trained on a vocabulary of ${baseModel.vocabSize} tokens, but this model has ${model.vocabSize}`,
      'parameters.baseModel.vocabSize',
    );
  }
}

/** The provider object behind {@link solProvider}. */
const provider: PolicyProvider<typeof SOL_OPTIONS, SolLoaded> = {
  name: 'sol',
  summary:
    'SOL: a small learned controller picks per decode step the attention keep rate, MLP input-channel keep rate and activation bits, steered to per-axis compute targets (learned; compute budgets)',
  options: SOL_OPTIONS,
  budgetForms: ['compute'],
  learned: {
    /**
     * @throws LetheError as `decodeSolPolicy` (`E_FORMAT` naming the manifest for malformed
     *   `parameters`, the controller file's errors — those about its tensors naming the tensors
     *   file, `<directory>/<parameters.tensors>` — `E_ARG` for an action set or base model that
     *   does not fit the controller).
     */
    async load(directory) {
      const location = `${directory.files.location}/policy.json`;
      const parameters = directory.manifest.parameters;
      const tensors = (parameters as { tensors?: unknown } | undefined)?.tensors;
      if (typeof tensors !== 'string' || tensors.length === 0) {
        throw new LetheError(
          'E_FORMAT',
          '"parameters.tensors" must name the controller\'s tensors file',
          location,
        );
      }
      const bytes = await directory.files.readBytes(tensors);
      const trained = decodeSolPolicy(
        parameters,
        bytes,
        location,
        `${directory.files.location}/${tensors}`,
      );
      return {
        controller: new SolController(trained.parameters),
        actions: trained.actions,
        baseModel: trained.baseModel,
      };
    },
  },
  /**
   * @throws LetheError `E_BUDGET` naming `budget` for a memory budget; `E_ARG` for a controller of
   *   another base model (see `checkBaseModel`); `SolPolicy`'s errors (e.g. `horizon` above the
   *   controller's `maxHorizon`).
   */
  build({ budget, options, context, parameters }) {
    if (!isComputeBudget(budget)) {
      throw new LetheError('E_BUDGET', '"sol" takes compute budgets ({ targets })', 'budget');
    }
    checkBaseModel(parameters.baseModel, context.model);
    return {
      compute: new SolPolicy({
        controller: parameters.controller,
        actions: parameters.actions,
        targets: budget.targets,
        horizon: options.horizon,
        sampling: options.sampling,
        refresh: options.refresh,
        alwaysDense: options.alwaysDense,
      }),
    };
  },
};

/**
 * SOL as a learned compute-policy provider: built for a compute budget `{ targets: { tokenKeep,
 * mlpInputKeep, precision } }` (the paper's `C_κ, C_ρ, C_η`, per request), it gives a
 * {@link SolPolicy} and no eviction — the cache keeps every entry; the runtime records the
 * realised per-axis averages. Its policy directory holds `policy.json` (`"provider": "sol"`, the
 * options, and `parameters` from `encodeSolPolicy`: the controller's config, the action levels,
 * the base model's hidden and vocabulary sizes, the tensors file) and `controller.safetensors`.
 */
export const solProvider: PolicyProvider<typeof SOL_OPTIONS, SolLoaded> = Object.freeze(provider);
