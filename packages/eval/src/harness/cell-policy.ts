import { LetheError } from '@lethe/core';
import {
  type ComposedPolicy,
  composePolicies,
  type PolicyBudget,
  type PolicySet,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import {
  checkPolicyBaseModel,
  type DecoderModel,
  policyContextOf,
  type Tokenizer,
} from '@lethe/model';
import { sequenceBudget } from './budget';
import type { CellEnvironment } from './cell-environment';
import { type PolicyPartSpec, policyOfCell, policyParts } from './policy-spec';
import { checkPolicyTokenizer } from './policy-tokenizer-check';
import type { CellKey } from './results';

/** The policy of a cell — one provider or a composition — prepared once, and the model it runs with. */
export interface CellPolicy {
  /** Its parts, prepared (options validated, parameters loaded) and composed; one part for a single policy. */
  readonly policy: ComposedPolicy;
  /** Per part, the kept fraction it always runs at, or null for the cell's budget. */
  readonly partBudgets: readonly (number | null)[];
  /** The model the policy's sequences run on: the task's, or the one a part's directory names. */
  readonly model: DecoderModel;
  /**
   * The tokenizer of the model a directory names, when it has one (it may extend the task's,
   * e.g. with the characters of a prompt conditioning); absent: the task's.
   */
  readonly tokenizer?: Tokenizer;
  /** Frees what the policy loaded: its parameters' device resources and a model loaded for it (not the task's own model). */
  release(): void;
}

/**
 * The budget of each part of `policy` for a sequence whose full-cache peak is `fullPeak` entries
 * per KV head at the cell's kept fraction `fraction`: each part's own fraction, or the cell's,
 * in the part's budget form (see `sequenceBudget`).
 *
 * @throws LetheError as `sequenceBudget`.
 */
export function cellBudgets(
  policy: CellPolicy,
  fraction: number,
  fullPeak: number,
  rateEvery: number | null,
): PolicyBudget[] {
  return policy.policy.parts.map((part, i) =>
    sequenceBudget(policy.partBudgets[i] ?? fraction, fullPeak, rateEvery, part.budgetForms),
  );
}

/** The policies of one batch of `sequences`: the cell's parts built for `budgets` (one per part). */
export function batchPolicies(
  policy: CellPolicy,
  budgets: readonly PolicyBudget[],
  sequences: number,
): PolicySet {
  return policy.policy.build(budgets, policyContextOf(policy.model, sequences));
}

/** A prepared part, and the model its directory names when it is one (NGC). */
interface PreparedPart {
  readonly prepared: PreparedPolicy;
  readonly loaded?: { readonly model: DecoderModel; readonly tokenizer?: Tokenizer };
}

/**
 * Prepares the policy of cell `key`: finds its spec in the sweep by label and task, and for each
 * of its parts (one for a single policy) opens its policy directory (learned policies), validates
 * its options, and loads the model its manifest names (with that model's tokenizer); a
 * composition runs on the model of its one part that names one, else on the task's.
 *
 * @throws LetheError `E_ARG` naming `key.policy` when the sweep has no policy of that label on
 *   the cell's task or a composition has two parts that name models, `policies` when a learned
 *   policy's cell has no policy store, the registry's errors (naming `policy`, `policyDir`,
 *   `options.<key>`), and the store's errors; `E_CHECKPOINT` naming the directory's
 *   `policy.json` when its policy was trained on another model than the task's (and the spec
 *   does not transfer it); the errors of `composePolicies`.
 */
export async function prepareCellPolicy(key: CellKey, env: CellEnvironment): Promise<CellPolicy> {
  const spec = policyOfCell(env.config.policies, key);
  if (spec === undefined) {
    throw new LetheError(
      'E_ARG',
      `names no policy of the sweep on task ${key.task} (${env.config.policies.map((p) => p.label).join(', ')})`,
      'key.policy',
    );
  }
  const parts: PreparedPart[] = [];
  const releaseAll = () => {
    for (const part of parts) {
      part.prepared.release();
      part.loaded?.model.dispose();
    }
  };
  try {
    for (const part of policyParts(spec)) {
      parts.push(await preparePart(part, spec.label, spec.transfer === true, env));
    }
    const owners = parts.filter((p) => p.loaded !== undefined);
    if (owners.length > 1) {
      throw new LetheError(
        'E_ARG',
        `composes ${owners.map((p) => p.prepared.name).join(' and ')}, which each run on a model of their own`,
        'key.policy',
      );
    }
    const policy = composePolicies(parts.map((p) => p.prepared));
    const loaded = owners[0]?.loaded;
    return {
      policy,
      partBudgets: policyParts(spec).map((p) => p.budget),
      model: loaded?.model ?? env.model,
      ...(loaded?.tokenizer === undefined ? {} : { tokenizer: loaded.tokenizer }),
      release: releaseAll,
    };
  } catch (error) {
    releaseAll();
    throw error;
  }
}

/**
 * Prepares one part: its directory opened, options validated, its model loaded and checked; with
 * `transfer`, a directory trained on another model than the task's runs on the task's.
 */
async function preparePart(
  part: PolicyPartSpec,
  label: string,
  transfer: boolean,
  env: CellEnvironment,
): Promise<PreparedPart> {
  const store = env.policies;
  if (part.dir !== null && store === undefined) {
    throw new LetheError(
      'E_ARG',
      `policy "${label}" has a directory (${part.dir}) but the cell has no policy store to read it`,
      'policies',
    );
  }
  const directory = part.dir === null ? undefined : await store!.open(part.dir);
  const prepared = await env.registry.prepare(part.name, { options: part.options, directory });
  try {
    if (prepared.model === undefined || part.dir === null) {
      // A learned policy runs on the model its directory was trained on, unless transferred.
      if (directory !== undefined && !transfer) {
        await checkPolicyBaseModel(
          directory,
          env.model,
          `the ${env.task.name} model of this sweep`,
        );
      }
      return { prepared };
    }
    // A policy that is a model (NGC) is that model: its directory's weights, for this task
    // (transferred or not: it runs on no other model).
    const loaded = await store!.loadModel(part.dir, prepared.model);
    try {
      await checkPolicyBaseModel(directory!, loaded.model, `${part.dir}/${prepared.model}`);
      checkPolicyTokenizer(loaded.tokenizer, loaded.model, env.task, part.dir);
    } catch (error) {
      loaded.model.dispose();
      throw error;
    }
    return { prepared, loaded };
  } catch (error) {
    prepared.release();
    throw error;
  }
}
