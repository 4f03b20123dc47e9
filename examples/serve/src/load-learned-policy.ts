import { LetheError } from '@lethe/core';
import { sequenceBudget } from '@lethe/eval';
import type { PolicyRegistry } from '@lethe/kv-cache';
import { checkPolicyBaseModel, policyContextOf } from '@lethe/model';
import { nodePolicyStore } from '@lethe/policies/node';
import { plainMessage } from './api-error';
import type { LearnedPolicy } from './request-policy';
import type { ServedModel } from './served-model';

/**
 * Loads a trained policy directory the server was given at start-up (`--policy name=dir`: a SOL
 * controller, GSA gates, a NAMM scorer — `policy.json` names its provider) and finds the served
 * models it cannot run on: it is built once for each, and a model whose shape it does not fit
 * (a controller trained for another hidden size or vocabulary, say), or that is not the model its
 * directory says it was trained on (another `modelIdentity`), is recorded with the reason,
 * so that a request pairing them gets a 400 saying why.
 *
 * @param options options over the trained ones (`--policy-options name=json`: a SOL controller
 *   with `refresh: false`, so that requests may compose it with an eviction policy); fixed for
 *   every request.
 * @throws LetheError `E_ARG` naming `--policy` for a directory whose policy carries its own
 *   model (NGC: serve that model directory with `--model` instead), `--policy-options` for a bad
 *   option (the message naming the policy and the option); the policy store's and the
 *   registry's errors for an unreadable or invalid directory.
 */
export async function loadLearnedPolicy(
  name: string,
  dir: string,
  registry: PolicyRegistry,
  models: ReadonlyMap<string, ServedModel>,
  options: Readonly<Record<string, unknown>> = {},
): Promise<LearnedPolicy> {
  const directory = await nodePolicyStore().open(dir);
  const { manifest } = directory;
  if (manifest.model !== undefined) {
    throw new LetheError(
      'E_ARG',
      `${dir} is a ${manifest.provider} policy with its own model ("${manifest.model}"): serving it needs that model, which this server does not pair with a policy yet`,
      '--policy',
    );
  }
  const prepared = await registry
    .prepare(manifest.provider, { directory, options })
    .catch((error: unknown) => {
      if (!(error instanceof LetheError) || !error.argument?.startsWith('options')) throw error;
      throw new LetheError(
        error.code,
        `${name}: ${error.argument}: ${plainMessage(error)}`,
        '--policy-options',
      );
    });
  const unfit = new Map<string, string>();
  for (const [id, served] of models) {
    try {
      await checkPolicyBaseModel(directory, served.model, `the served model "${id}"`);
      prepared.build(
        sequenceBudget(0.5, 64, null, prepared.budgetForms),
        policyContextOf(served.model, 1),
      );
    } catch (error) {
      unfit.set(
        id,
        error instanceof LetheError
          ? plainMessage(error)
          : error instanceof Error
            ? error.message
            : String(error),
      );
    }
  }
  return { name, prepared, unfit };
}
