import { LetheError } from '@lethe/core';
import type { PreparedPolicy } from './policy-registry';
import type { PolicyBudget, PolicyContext, PolicySet } from './provider';

/** What joins the names of a composition's parts: `namm+sol`. */
export const COMPOSITION_SEPARATOR = '+';

/** The slots of a {@link PolicySet} a part fills; each is filled by at most one part. */
const SLOTS = ['eviction', 'readSelector', 'compute', 'prompt'] as const;

/**
 * One policy set from the sets of several policies, each filling its own slots — an eviction
 * policy with a compute policy (`namm+sol`, `h2o+sol-fixed`), a read selector with either — as
 * kvpress's `ComposedPress` chains presses. The set's `ceiling` is that of the part holding the
 * eviction policy.
 *
 * @param sets the parts' sets, in order.
 * @param names the parts' names for messages (default `sets[i]`).
 * @throws LetheError `E_ARG` naming `sets` when it is not a non-empty array, `sets[i]` when it is
 *   not an object or fills a slot an earlier part fills, and `sets[i].compute.refreshEvery` for
 *   a compute policy that refreshes its KV entries beside another part's eviction policy or read
 *   selector (the runtime cannot run both: see `checkPolicies` of `@lethe/model`).
 *
 * @example
 * ```ts
 * const set = composePolicySets([h2o.build({ capacity: 32 }, context), fixed.build(compute, context)]);
 * // set.eviction from H2O, set.compute from the fixed schedule, set.ceiling 32
 * ```
 */
export function composePolicySets(
  sets: readonly PolicySet[],
  names: readonly string[] = sets.map((_, i) => `sets[${i}]`),
): PolicySet {
  if (!Array.isArray(sets) || sets.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of policy sets', 'sets');
  }
  const composed: Record<string, unknown> = {};
  const owner = new Map<string, number>();
  sets.forEach((set, i) => {
    if (typeof set !== 'object' || set === null) {
      throw new LetheError('E_ARG', 'must be a PolicySet', `sets[${i}]`);
    }
    for (const slot of SLOTS) {
      if (set[slot] === undefined) continue;
      const earlier = owner.get(slot);
      if (earlier !== undefined) {
        throw new LetheError(
          'E_ARG',
          `${names[i]} and ${names[earlier]} both fill the ${slot} slot; a composition takes one policy per slot`,
          `sets[${i}]`,
        );
      }
      owner.set(slot, i);
      composed[slot] = set[slot];
    }
    if (set.ceiling !== undefined) composed.ceiling = set.ceiling;
  });
  const computeOwner = owner.get('compute');
  const every = computeOwner === undefined ? undefined : sets[computeOwner]!.compute!.refreshEvery;
  if (every !== undefined) {
    const other = owner.get('eviction') ?? owner.get('readSelector');
    if (other !== undefined) {
      throw new LetheError(
        'E_ARG',
        `${names[computeOwner!]} refreshes its KV entries every ${every} steps, which cannot run beside ${names[other]}'s ${owner.has('eviction') ? 'eviction policy' : 'read selector'} (the refresh would bring back what it dropped); build it without the refresh (SOL: option refresh false)`,
        `sets[${computeOwner}].compute.refreshEvery`,
      );
    }
  }
  return composed as PolicySet;
}

/**
 * Prepared policies run together, each under its own budget: what a harness, the CLI or a server
 * keeps for a composition (and, with one part, for a single policy).
 */
export interface ComposedPolicy {
  /** The parts' names joined by {@link COMPOSITION_SEPARATOR} (`namm+sol`; one part: its name). */
  readonly name: string;
  /** The parts, in order. */
  readonly parts: readonly PreparedPolicy[];
  /**
   * Builds every part under its budget (`budgets[i]` for `parts[i]`, in a form it takes) and
   * composes the sets ({@link composePolicySets}).
   *
   * @throws LetheError `E_ARG` naming `budgets` unless it has one budget per part; a part's
   *   budget errors naming `budgets[i]`; its other build errors; the errors of
   *   {@link composePolicySets} (naming `sets[i]` for part `i`).
   */
  build(budgets: readonly PolicyBudget[], context: PolicyContext): PolicySet;
  /** Releases every part (see `PreparedPolicy.release`). */
  release(): void;
}

/**
 * Composes prepared policies: one set per batch with every part's slots.
 *
 * @throws LetheError `E_ARG` naming `parts` when it is not a non-empty array, `parts[i]` when it
 *   is not a prepared policy or repeats an earlier part's name.
 *
 * @example
 * ```ts
 * const namm = await registry.prepare('namm', { directory: nammDir });
 * const sol = await registry.prepare('sol', { directory: solDir, options: { refresh: false } });
 * const both = composePolicies([namm, sol]);
 * const set = both.build([{ capacity: 64 }, { targets }], context);
 * ```
 */
export function composePolicies(parts: readonly PreparedPolicy[]): ComposedPolicy {
  if (!Array.isArray(parts) || parts.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty array of prepared policies', 'parts');
  }
  parts.forEach((part, i) => {
    if (typeof part !== 'object' || part === null || typeof part.build !== 'function') {
      throw new LetheError('E_ARG', 'must be a PreparedPolicy (registry.prepare)', `parts[${i}]`);
    }
    if (parts.findIndex((p) => p.name === part.name) !== i) {
      throw new LetheError('E_ARG', `repeats the policy "${part.name}"`, `parts[${i}]`);
    }
  });
  const frozen = Object.freeze([...parts]);
  const names = frozen.map((p) => p.name);
  return Object.freeze({
    name: names.join(COMPOSITION_SEPARATOR),
    parts: frozen,
    build(budgets: readonly PolicyBudget[], context: PolicyContext): PolicySet {
      if (!Array.isArray(budgets) || budgets.length !== frozen.length) {
        throw new LetheError(
          'E_ARG',
          `must hold one budget per part (${frozen.length}: ${names.join(', ')})`,
          'budgets',
        );
      }
      const sets = frozen.map((part, i) => {
        try {
          return part.build(budgets[i]!, context);
        } catch (error) {
          throw frozen.length > 1 ? renamedBudgetError(error, i, part.name) : error;
        }
      });
      return frozen.length === 1 ? sets[0]! : composePolicySets(sets, names);
    },
    release(): void {
      for (const part of frozen) part.release();
    },
  });
}

/** A part's error about its `budget` re-issued about `budgets[i]`; other errors unchanged. */
function renamedBudgetError(error: unknown, i: number, name: string): unknown {
  if (!(error instanceof LetheError) || error.argument !== 'budget') return error;
  const prefix = `[${error.code}] budget: `;
  const message = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return new LetheError(error.code, `(${name}) ${message}`, `budgets[${i}]`);
}
