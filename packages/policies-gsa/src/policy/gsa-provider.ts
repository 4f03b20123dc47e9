import { LetheError } from '@lethe/core';
import {
  entriesAfterRound,
  isRateBudget,
  type PolicyModelShape,
  type PolicyProvider,
  requireCapacityBudget,
} from '@lethe/kv-cache';
import * as v from 'valibot';
import type { GsaGateParameters } from '../gate/gate-parameters';
import { decodeGsaParameters } from '../gate/gate-safetensors';
import { GATE_GRANULARITIES } from '../gate/granularity';
import type { GsaGate } from '../gate/gsa-gate';
import { GsaPolicy } from './gsa-policy';

/** Sinks GSA keeps unless told otherwise (the paper's evaluation default). */
export const GSA_DEFAULT_SINKS = 4;
/** Recent window GSA keeps unless told otherwise (the paper's evaluation default). */
export const GSA_DEFAULT_WINDOW = 32;

const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const positive = v.pipe(v.number(), v.integer(), v.minValue(1));

const GSA_OPTIONS = v.strictObject({
  sinks: v.pipe(
    v.optional(count, GSA_DEFAULT_SINKS),
    v.description(
      `attention sinks always kept: the entries at token positions below it (the paper: ${GSA_DEFAULT_SINKS})`,
    ),
  ),
  window: v.pipe(
    v.optional(count, GSA_DEFAULT_WINDOW),
    v.description(
      `most recent entries always kept (the paper: ${GSA_DEFAULT_WINDOW} with a budget of 128; scale it to the prompt lengths)`,
    ),
  ),
});

const MANIFEST_PARAMETERS = v.strictObject({
  granularity: v.picklist(GATE_GRANULARITIES),
  layers: positive,
  hiddenSize: positive,
  kvHeads: positive,
  tensors: v.pipe(v.string(), v.minLength(1)),
});

/** What the GSA provider loads from a policy directory: the gate's parameters and its weights on the tensor backend. */
export interface GsaLoaded {
  /** The gate's parameters as plain typed arrays (for `gateValues`, or another runtime). */
  readonly parameters: GsaGateParameters;
  /** The gate with its weights uploaded, shared by every policy built from this load. */
  readonly gate: GsaGate;
}

/**
 * Refuses a gate sized for another model.
 *
 * @throws LetheError `E_ARG` naming `parameters.hiddenSize`, `parameters.layers` or
 *   `parameters.kvHeads`, with the gate's and the model's numbers.
 */
function checkModelShape(gate: GsaGate, model: PolicyModelShape): void {
  for (const field of ['hiddenSize', 'layers', 'kvHeads'] as const) {
    if (gate[field] !== model[field]) {
      throw new LetheError(
        'E_ARG',
        `the gate was trained for ${field} ${gate[field]}, but the model has ${field} ${model[field]}`,
        `parameters.${field}`,
      );
    }
  }
}

/** The provider object behind {@link gsaProvider}. */
const provider: PolicyProvider<typeof GSA_OPTIONS, GsaLoaded> = {
  name: 'gsa',
  summary:
    'Octopus / Gated Selective Attention: a learned gate scores every token when written; keeps sinks, a recent window and the highest gates (learned)',
  options: GSA_OPTIONS,
  learned: {
    /**
     * @throws LetheError `E_FORMAT` naming the manifest when its `parameters` are not a GSA
     *   gate's (`granularity`, `layers`, `hiddenSize`, `kvHeads`, `tensors`), or the tensors file
     *   as `decodeGsaParameters`; `E_ARG` as `decodeGsaParameters`.
     */
    async load(directory) {
      const location = `${directory.files.location}/policy.json`;
      const parsed = v.safeParse(MANIFEST_PARAMETERS, directory.manifest.parameters);
      if (!parsed.success) {
        const issue = parsed.issues[0];
        const path = issue.path?.map((item) => String(item.key)).join('.') ?? '';
        throw new LetheError(
          'E_FORMAT',
          `"parameters" must be { granularity, layers, hiddenSize, kvHeads, tensors }${path === '' ? '' : ` (at "${path}")`}: ${issue.message}`,
          location,
        );
      }
      const { tensors, ...header } = parsed.output;
      const bytes = await directory.files.readBytes(tensors);
      const parameters = decodeGsaParameters(
        header,
        bytes,
        `${directory.files.location}/${tensors}`,
      );
      // the gate runs on tfjs: loaded here, when a policy needs it, so that importing the
      // package loads no tensor library
      const { GsaGate } = await import('../gate/gsa-gate');
      return { parameters, gate: new GsaGate(parameters) };
    },
    release(loaded) {
      loaded.gate.dispose();
    },
  },
  /**
   * @throws LetheError `E_ARG` naming `parameters.hiddenSize`, `parameters.layers` or
   *   `parameters.kvHeads` for a gate of another model; `E_BUDGET` naming `anchors` when
   *   `sinks + window` exceed the `capacity − 1` entries a round leaves.
   */
  build({ budget, options, context, parameters: { gate } }) {
    checkModelShape(gate, context.model);
    const anchors = { sinks: options.sinks, window: options.window };
    if (isRateBudget(budget)) {
      return {
        eviction: new GsaPolicy({
          gate,
          anchors,
          budget: { keepRatio: budget.keepRatio },
          trigger: { every: budget.every },
        }),
      };
    }
    const { capacity } = requireCapacityBudget(budget, 'gsa');
    const kept = entriesAfterRound({ capacity });
    const anchored = anchors.sinks + anchors.window;
    if (anchored > kept) {
      throw new LetheError(
        'E_BUDGET',
        `sinks ${anchors.sinks} + window ${anchors.window} = ${anchored} entries per KV head are always kept, but budget.capacity ${capacity} leaves ${kept} after a round (one slot holds the next token); lower sinks or window, or raise the budget`,
        'anchors',
      );
    }
    return {
      eviction: new GsaPolicy({
        gate,
        anchors,
        budget: { keepCount: kept },
        trigger: { whenLiveExceeds: kept, slack: 0 },
      }),
    };
  },
};

/**
 * Octopus / GSA as a learned policy provider. Its policy directory holds `policy.json`
 * (`"provider": "gsa"`, the options, and `parameters`: `granularity`, `layers`, `hiddenSize`,
 * `kvHeads` and `tensors`, the tensors file) and `gates.safetensors` (see `gateTensorName`).
 * Loading uploads the gate's weights once; `release` frees them. Under a capacity budget a round
 * runs as soon as a KV head exceeds `capacity − 1` entries and leaves `capacity − 1`: the sinks,
 * the window and the highest gates. Under a rate schedule a round every `every` tokens keeps
 * `⌈keepRatio · live⌉` of each head the same way.
 */
export const gsaProvider: PolicyProvider<typeof GSA_OPTIONS, GsaLoaded> = Object.freeze(provider);
