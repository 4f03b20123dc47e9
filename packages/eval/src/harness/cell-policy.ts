import { LetheError } from '@lethe/core';
import type { PolicyBudget, PolicySet, PreparedPolicy } from '@lethe/kv-cache';
import {
  checkPolicyBaseModel,
  type DecoderModel,
  policyContextOf,
  type Tokenizer,
} from '@lethe/model';
import type { CellEnvironment } from './cell-environment';
import { policyOfCell } from './policy-spec';
import { checkPolicyTokenizer } from './policy-tokenizer-check';
import type { CellKey } from './results';

/** The policy of a cell, prepared once, and the model it runs with. */
export interface CellPolicy {
  /** The prepared provider (options validated, parameters loaded). */
  readonly prepared: PreparedPolicy;
  /** The model the policy's sequences run on: the task's, or the one its directory names. */
  readonly model: DecoderModel;
  /**
   * The tokenizer of the model its directory names, when it has one (it may extend the task's,
   * e.g. with the characters of a prompt conditioning); absent: the task's.
   */
  readonly tokenizer?: Tokenizer;
  /** Frees what the policy loaded: its parameters' device resources and a model loaded for it (not the task's own model). */
  release(): void;
}

/** The policies of one batch of `sequences`: the cell's provider built for `budget`. */
export function batchPolicies(
  policy: CellPolicy,
  budget: PolicyBudget,
  sequences: number,
): PolicySet {
  return policy.prepared.build(budget, policyContextOf(policy.model, sequences));
}

/**
 * Prepares the policy of cell `key`: finds its spec in the sweep by label and task, opens its
 * policy directory (learned policies), validates its options, and loads the model its manifest
 * names (with that model's tokenizer).
 *
 * @throws LetheError `E_ARG` naming `key.policy` when the sweep has no policy of that label on
 *   the cell's task, `policies` when a learned policy's cell has no policy store, the registry's
 *   errors (naming `policy`, `policyDir`, `options.<key>`), and the store's errors;
 *   `E_CHECKPOINT` naming the directory's `policy.json` when its policy was trained on another
 *   model than the task's.
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
  const store = env.policies;
  if (spec.dir !== null && store === undefined) {
    throw new LetheError(
      'E_ARG',
      `policy "${spec.label}" has a directory (${spec.dir}) but the cell has no policy store to read it`,
      'policies',
    );
  }
  const directory = spec.dir === null ? undefined : await store!.open(spec.dir);
  const prepared = await env.registry.prepare(spec.name, { options: spec.options, directory });
  if (prepared.model === undefined || spec.dir === null) {
    // A learned policy runs on the model its directory was trained on.
    if (directory !== undefined) {
      await checkPolicyBaseModel(directory, env.model, `the ${key.task} model of this sweep`).catch(
        (error: unknown) => {
          prepared.release();
          throw error;
        },
      );
    }
    return { prepared, model: env.model, release: () => prepared.release() };
  }
  const { model, tokenizer } = await store!
    .loadModel(spec.dir, prepared.model)
    .then(async (loaded) => {
      // A policy that is a model (NGC) is that model: its directory's weights, for this task.
      try {
        await checkPolicyBaseModel(directory!, loaded.model, `${spec.dir}/${prepared.model}`);
        checkPolicyTokenizer(loaded.tokenizer, loaded.model, env.task, spec.dir!);
      } catch (error) {
        loaded.model.dispose();
        throw error;
      }
      return loaded;
    })
    .catch((error: unknown) => {
      prepared.release();
      throw error;
    });
  return {
    prepared,
    model,
    ...(tokenizer === undefined ? {} : { tokenizer }),
    release: () => {
      prepared.release();
      model.dispose();
    },
  };
}
