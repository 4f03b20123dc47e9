import { LetheError } from '@lethe/core';
import {
  checkQueryWindow,
  entriesAfterRound,
  isRateBudget,
  MAX_QUERY_WINDOW_FLOATS,
  type PolicyProvider,
  requireCapacityBudget,
} from '@lethe/kv-cache';
import * as v from 'valibot';
import { FEATURE_SETS, type FeatureSet } from '../features/token-features';
import { createScorer } from '../scorer/scorer';
import { SCORER_SPEC_SCHEMA } from '../scorer/scorer-spec';
import { decodeNammParameters, type NammParameters } from './namm-parameters';
import { NammPolicy } from './namm-policy';

/** The update interval `n_up` NAMM uses unless told otherwise (the paper's 512 is for 32k-token prompts). */
export const NAMM_DEFAULT_UPDATE_INTERVAL = 64;

/**
 * NAMM reads the attention of every query since its last round, so the cache keeps
 * `updateInterval` queries per layer: an interval no cache can hold (more queries than
 * `MAX_QUERY_WINDOW_FLOATS`) is refused here, whatever the model; `build` checks the model's own
 * bound (`maxQueryWindow`).
 */
const UPDATE_INTERVAL = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(1),
  v.maxValue(
    MAX_QUERY_WINDOW_FLOATS,
    `must be ≤ ${MAX_QUERY_WINDOW_FLOATS}: no cache holds a longer query window`,
  ),
);

const NAMM_OPTIONS = v.strictObject({
  updateInterval: v.pipe(
    v.optional(UPDATE_INTERVAL),
    v.description(
      `n_up: tokens between rounds, prefill chunked to match (default ${NAMM_DEFAULT_UPDATE_INTERVAL}; under a rate schedule its \`every\`, which a given value must equal; at most what the cache holds, maxQueryWindow(queryHeads, headDim))`,
    ),
  ),
  threshold: v.pipe(
    v.optional(v.pipe(v.number(), v.finite()), 0),
    v.description('entries scoring below it are evicted (the paper: 0)'),
  ),
  equalHeads: v.pipe(
    v.optional(v.boolean(), false),
    v.description(
      "the reference code's equal-length heads: every head of a layer evicts as many as the head with the fewest below the threshold",
    ),
  ),
});

const MANIFEST_PARAMETERS = v.object({
  scorer: SCORER_SPEC_SCHEMA,
  features: v.picklist(FEATURE_SETS),
  tensors: v.string(),
});

/** The provider object behind {@link nammProvider}. */
const provider: PolicyProvider<typeof NAMM_OPTIONS, NammParameters> = {
  name: 'namm',
  summary:
    'Neural Attention Memory Models: attention spectrograms scored by an evolved backward-attention net, evict below 0 (learned)',
  options: NAMM_OPTIONS,
  learned: {
    /**
     * @throws LetheError `E_FORMAT` naming the manifest when its `parameters` are not a NAMM's,
     *   or the tensors file when it lacks the genome or the statistics; `E_ARG` as
     *   `checkNammParameters`.
     */
    async load(directory) {
      const location = `${directory.files.location}/policy.json`;
      const parsed = v.safeParse(MANIFEST_PARAMETERS, directory.manifest.parameters);
      if (!parsed.success) {
        throw new LetheError(
          'E_FORMAT',
          `"parameters" must name the scorer ({ kind, features, hidden | depth }), the features and the tensors file: ${parsed.issues[0].message}`,
          location,
        );
      }
      const { scorer, features, tensors } = parsed.output;
      const bytes = await directory.files.readBytes(tensors);
      return decodeNammParameters(
        { scorer, features: features as FeatureSet },
        bytes,
        `${directory.files.location}/${tensors}`,
      );
    },
  },
  /**
   * @throws LetheError `E_ARG` naming `options.updateInterval` (or the rate schedule's
   *   `budget.every`) when the model's cache cannot hold that many queries
   *   (`maxQueryWindow(queryHeads, headDim)`); `E_BUDGET` naming the option that does not fit the
   *   budget's form.
   */
  build({ budget, options, parameters, context }) {
    const { queryHeads, headDim } = context.model;
    const shared = {
      scorer: createScorer(parameters.scorer, parameters.genome),
      features: parameters.features,
      normalization: parameters.normalization,
      threshold: options.threshold,
    };
    if (isRateBudget(budget)) {
      if (options.updateInterval !== undefined && options.updateInterval !== budget.every) {
        throw new LetheError(
          'E_BUDGET',
          `is ${options.updateInterval} but the rate schedule runs a round every ${budget.every} tokens`,
          'options.updateInterval',
        );
      }
      if (options.equalHeads) {
        throw new LetheError(
          'E_BUDGET',
          'a rate schedule keeps the same share of every head already; leave it out',
          'options.equalHeads',
        );
      }
      return {
        eviction: new NammPolicy({
          ...shared,
          updateInterval: checkQueryWindow(budget.every, queryHeads, headDim, 'budget.every'),
          budget: { kind: 'rate', keepRatio: budget.keepRatio },
        }),
      };
    }
    return {
      eviction: new NammPolicy({
        ...shared,
        updateInterval: checkQueryWindow(
          options.updateInterval ?? NAMM_DEFAULT_UPDATE_INTERVAL,
          queryHeads,
          headDim,
          'options.updateInterval',
        ),
        equalHeads: options.equalHeads,
        budget: {
          kind: 'capacity',
          kept: entriesAfterRound(requireCapacityBudget(budget, 'namm')),
        },
      }),
    };
  },
};

/**
 * NAMM as a learned policy provider. Its policy directory holds `policy.json` (`"provider":
 * "namm"`, the options it was evolved with, and `parameters`: the scorer's architecture, the
 * feature set and the tensors file) and `namm.safetensors` (the genome, F64, and the spectrogram
 * normalisation, F32). Under a capacity budget a round runs every `updateInterval` tokens and
 * whenever a head exceeds the capacity, keeping the entries scoring ≥ `threshold` (the best
 * `capacity − 1` of them when more); a budget as large as the sequence is NAMM as the paper
 * runs it. Under a rate schedule a round every `every` tokens keeps the best-scoring
 * `⌈keepRatio · live⌉` of each head.
 */
export const nammProvider: PolicyProvider<typeof NAMM_OPTIONS, NammParameters> =
  Object.freeze(provider);
