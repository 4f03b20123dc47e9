import { LetheError } from '@lethe/core';
import { type AnyPolicyProvider, fullCacheProvider, PolicyRegistry } from '@lethe/kv-cache';
import { gsaProvider } from '@lethe/policies-gsa';
import { HEURISTIC_PROVIDERS } from '@lethe/policies-heuristic';
import { nammProvider } from '@lethe/policies-namm';
import { ngcProvider } from '@lethe/policies-ngc';
import { SOL_BASELINE_PROVIDERS, solProvider } from '@lethe/policies-sol';

/**
 * The providers of every Lethe policy package: the full cache, the heuristics of
 * `@lethe/policies-heuristic`, NGC, NAMM, GSA, and SOL with its baselines (compute policies).
 * The CLI, sweeps, the main job and the server use this list; a new policy package joins them
 * by adding its providers here.
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
 * @example
 * ```ts
 * const registry = createDefaultRegistry();
 * const h2o = await registry.prepare('h2o', { options: { statistic: 'sum' } });
 * ```
 * @throws LetheError `E_ARG` naming the provider for a name clash or a malformed provider,
 *   `extra` when it is not an array.
 */
export function createDefaultRegistry(extra: readonly AnyPolicyProvider[] = []): PolicyRegistry {
  if (!Array.isArray(extra)) {
    throw new LetheError('E_ARG', 'must be an array of policy providers', 'extra');
  }
  return new PolicyRegistry([...DEFAULT_PROVIDERS, ...extra]);
}
