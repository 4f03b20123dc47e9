import { MEMORY_BUDGET_FORMS, type PolicyRegistry } from '@lethe/kv-cache';
import { requireObject } from './arguments';
import type { KnownNames } from './sweep-config';

/**
 * What a sweep config is checked against for `registry`: its provider names, and the memory
 * policies that need no policy directory (what a `"*"` entry of `policies` expands to: the
 * heuristics that evict under a capacity or a rate). The others read a sweep's budget fraction
 * in another unit, so a sweep lists them by name: compute policies (SOL's baselines) as a net
 * keep-rate, read selectors (Quest) as the share of each example's full-cache peak a step reads.
 *
 * @throws LetheError `E_ARG` naming `registry` when it is not an object.
 */
export function knownPolicies(
  registry: PolicyRegistry,
): Pick<KnownNames, 'policies' | 'untrained'> {
  requireObject(registry, 'registry', 'a PolicyRegistry');
  return {
    policies: registry.names(),
    untrained: registry
      .list()
      .filter(
        (provider) =>
          provider.learned === undefined &&
          (provider.budgetForms ?? MEMORY_BUDGET_FORMS).some((form) =>
            MEMORY_BUDGET_FORMS.includes(form),
          ),
      )
      .map((provider) => provider.name),
  };
}
