import { FULL_CACHE, MEMORY_BUDGET_FORMS, type PolicyRegistry } from '@lethe/kv-cache';
import { requireObject } from './arguments';
import type { KnownNames, SweepConfig } from './sweep-config';

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

/** The roles of a sweep's policies on its leaderboard (see {@link leaderboardRoles}). */
export interface LeaderboardRoles {
  /** Labels of the heuristics: every part an untrained memory policy, no directory. */
  readonly heuristics: readonly string[];
  /**
   * Labels compared with the best heuristic: every policy whose parts all evict under a memory
   * budget (the full cache aside) — learned ones and the heuristics themselves. Compute policies
   * and read selectors read the budget in another unit and are left out.
   */
  readonly compared: readonly string[];
  /**
   * Labels of the policies plotted against their net keep-rate, not their realised budget: a part
   * of them reads a compute budget (SOL's) or a read budget (Quest's) — what each step computes
   * or reads, from a cache that alone keeps everything (its realised budget is the full cache's).
   */
  readonly compute: readonly string[];
}

/**
 * Which policies of `config` are heuristics, which are compared with the best of them at each
 * budget (`compareToBestHeuristic`), and which are compute policies or read selectors (plotted
 * against their net keep-rate), by what `registry` says of their providers.
 *
 * @throws LetheError `E_ARG` naming `registry` when it is not an object; `E_ARG` from the
 *   registry for a provider name it does not know.
 */
export function leaderboardRoles(config: SweepConfig, registry: PolicyRegistry): LeaderboardRoles {
  const { untrained } = knownPolicies(registry);
  const heuristics: string[] = [];
  const compared: string[] = [];
  const compute: string[] = [];
  for (const spec of config.policies) {
    if (spec.name === FULL_CACHE) continue;
    const parts = spec.name.split('+');
    const forms = parts.flatMap((part) => registry.provider(part).budgetForms ?? []);
    if (forms.includes('compute') || forms.includes('read')) compute.push(spec.label);
    const memory = parts.every((part) =>
      (registry.provider(part).budgetForms ?? MEMORY_BUDGET_FORMS).some((form) =>
        MEMORY_BUDGET_FORMS.includes(form),
      ),
    );
    if (!memory) continue;
    compared.push(spec.label);
    if (spec.dir === null && parts.every((part) => untrained!.includes(part))) {
      heuristics.push(spec.label);
    }
  }
  return { heuristics, compared, compute };
}
