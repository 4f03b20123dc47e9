import { MEMORY_BUDGET_FORMS, type PolicyRegistry } from '@lethe/kv-cache';
import { requireObject } from './arguments';
import type { KnownNames } from './sweep-config';

/**
 * What a sweep config is checked against for `registry`: its provider names, and the memory
 * policies that need no policy directory (what a `"*"` entry of `policies` expands to: the
 * heuristics; compute policies — SOL's baselines — read a sweep's budget fraction as a net
 * keep-rate, so a sweep lists them by name).
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
          (provider.budgetForms ?? MEMORY_BUDGET_FORMS).some((form) => form !== 'compute'),
      )
      .map((provider) => provider.name),
  };
}
