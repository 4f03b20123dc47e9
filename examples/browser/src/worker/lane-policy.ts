import { LetheError } from '@lethe/core';
import { type PolicySpec, policyParts, policySpec } from '@lethe/eval';
import {
  COMPOSITION_SEPARATOR,
  type ComposedPolicy,
  composePolicies,
  type PolicyDirectory,
  type PolicyRegistry,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import type { PolicyStore } from '@lethe/policies';
import type { LaneRequest } from './protocol';
import { type ShippedModel, shippedUrl } from './shipped';

/** A lane's policy, prepared: its parts composed, and the directories learned parts came from. */
export interface LanePolicy {
  readonly spec: PolicySpec;
  readonly policy: ComposedPolicy;
  /** Per part, the policy directory it read (learned parts), with its location. */
  readonly directories: readonly (
    | { readonly dir: string; readonly directory: PolicyDirectory }
    | undefined
  )[];
}

/**
 * The sweep entry of a lane (what `lethe generate`'s `--policy` and `--policy-options` give):
 * one provider, or names joined by `+` whose options are given by part name. A learned part reads
 * the policy directory shipped for the model (`dirOf`).
 *
 * @throws LetheError `E_ARG` naming `policy` for an unknown name, `options` when it is not an
 *   object by part name for a composition, `policy` for a learned part with no directory for
 *   this model.
 */
export function laneSpec(
  request: LaneRequest,
  registry: PolicyRegistry,
  dirOf: (name: string) => string | undefined,
): PolicySpec {
  const names = request.policy.split(COMPOSITION_SEPARATOR);
  for (const name of names) registry.provider(name, 'policy');
  const part = (name: string, options: unknown) => {
    const learned = registry.provider(name, 'policy').learned !== undefined;
    const dir = learned ? dirOf(name) : undefined;
    if (learned && dir === undefined) {
      throw new LetheError('E_ARG', `"${name}" has no policy directory for this model`, 'policy');
    }
    return { name, options: options ?? {}, ...(dir === undefined ? {} : { dir }) };
  };
  if (names.length === 1)
    return policySpec(part(names[0]!, request.options), 'policy', registry.names());
  const options = request.options ?? {};
  for (const key of Object.keys(options)) {
    if (!names.includes(key)) {
      throw new LetheError('E_ARG', `names "${key}", not a part of ${request.policy}`, 'options');
    }
  }
  return policySpec(
    { compose: names.map((name) => part(name, options[name])) },
    'policy',
    registry.names(),
  );
}

/**
 * Prepares every part of `spec` (learned ones from their directories through `store`) and
 * composes them. A part that fails releases the ones prepared before it.
 */
export async function prepareLanePolicy(
  spec: PolicySpec,
  registry: PolicyRegistry,
  store: PolicyStore,
): Promise<LanePolicy> {
  const prepared: PreparedPolicy[] = [];
  const directories: LanePolicy['directories'][number][] = [];
  try {
    for (const part of policyParts(spec)) {
      const directory = part.dir === null ? undefined : await store.open(part.dir);
      prepared.push(await registry.prepare(part.name, { options: part.options, directory }));
      directories.push(directory === undefined ? undefined : { dir: part.dir!, directory });
    }
  } catch (error) {
    for (const policy of prepared) policy.release();
    throw error;
  }
  return { spec, policy: composePolicies(prepared), directories };
}

/** The shipped policy directory of learned policy `name` for `model`, as a URL below `base`. */
export function shippedPolicyDir(
  model: ShippedModel | undefined,
  name: string,
  base: string,
): string | undefined {
  const dir = model?.policies[name]?.dir;
  return dir === undefined ? undefined : shippedUrl(dir, base);
}
