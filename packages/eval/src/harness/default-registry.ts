import {
  type AnyPolicyProvider,
  fullCacheProvider,
  MEMORY_BUDGET_FORMS,
  PolicyRegistry,
} from '@lethe/kv-cache';
import { gsaProvider } from '@lethe/policies-gsa';
import { HEURISTIC_PROVIDERS } from '@lethe/policies-heuristic';
import { nammProvider } from '@lethe/policies-namm';
import { ngcProvider } from '@lethe/policies-ngc';
import { SOL_BASELINE_PROVIDERS, solProvider } from '@lethe/policies-sol';
import { requireArray, requireObject } from './arguments';
import type { KnownNames } from './sweep-config';

/**
 * The providers of every installed Lethe policy package: the full cache, the heuristics of
 * `@lethe/policies-heuristic`, NGC, NAMM, GSA, and SOL with its baselines (compute policies). The CLI, sweeps and the main job use this list; a new
 * policy package joins them by adding its providers here.
 */
export const DEFAULT_PROVIDERS: readonly AnyPolicyProvider[] = Object.freeze([
  fullCacheProvider,
  ...HEURISTIC_PROVIDERS,
  ngcProvider,
  nammProvider,
  gsaProvider,
  solProvider,
  ...SOL_BASELINE_PROVIDERS,
]);

/**
 * A fresh registry of {@link DEFAULT_PROVIDERS}, optionally with more providers after them (a
 * user's own policies).
 *
 * @throws LetheError `E_ARG` naming the provider for a name clash or a malformed provider,
 *   `extra` when it is not an array.
 */
export function createDefaultRegistry(extra: readonly AnyPolicyProvider[] = []): PolicyRegistry {
  requireArray(extra, 'extra');
  return new PolicyRegistry([...DEFAULT_PROVIDERS, ...extra]);
}

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
