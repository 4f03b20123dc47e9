import type { EvictionPolicy } from '@lethe/kv-cache';
import type { DecoderModel } from '@lethe/model';
import { createHeuristic, HEURISTIC_NAMES, type HeuristicName } from '@lethe/policies-heuristic';
import { LetheError } from '@lethe/tensor';

/** Name of the full cache (no eviction) in every {@link PolicyRegistry}. */
export const FULL_POLICY = 'full';

/** The absolute budget a policy factory receives: entries kept per KV head. */
export interface PolicyBudget {
  /** Entries per KV head, a positive integer (see `capacityFor`). */
  readonly capacity: number;
}

/** What else a policy factory may need to build a policy for one group of sequences. */
export interface PolicyContext {
  /** The requested budget fraction in (0, 1] that `capacity` was derived from. */
  readonly budget: number;
  /** Full-cache length `L` (entries per KV head) of the sequences the policy will serve. */
  readonly fullLength: number;
  /** Task registry name of the cell. */
  readonly task: string;
  /** Seed of the cell. */
  readonly seed: number;
  /** The model the policy will run with (learned policies read its config or weights). */
  readonly model: DecoderModel;
}

/**
 * Builds the eviction policy for one batch of sequences; `undefined` means the full cache.
 * The harness calls it once per generation batch (every sequence of a batch has the same
 * full-cache length, hence the same capacity), so a factory may return a fresh, stateful policy
 * each time.
 */
export type PolicyFactory = (
  budget: PolicyBudget,
  context: PolicyContext,
) => EvictionPolicy | undefined;

/** Names may be used as CLI flag values and in result keys: lower-case, digits, `-`, `_`, `.`. */
const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * Policies by name, for sweeps and the CLI. The default registry
 * ({@link createDefaultRegistry}) holds `full` and every heuristic of
 * `@lethe/policies-heuristic`; learned-policy packages add theirs with
 * {@link PolicyRegistry.register}.
 *
 * @example
 * ```ts
 * const registry = createDefaultRegistry();
 * // a learned-policy package (NgcPolicy is illustrative):
 * registry.register('ngc', (budget, context) => new NgcPolicy({ budget, model: context.model }));
 * const policy = registry.create('h2o', { capacity: 64 }, context);
 * ```
 */
export class PolicyRegistry {
  private readonly factories = new Map<string, PolicyFactory>();

  /**
   * Adds a policy under `name`.
   *
   * @throws LetheError `E_ARG` (argument `name`) for a name already registered or not matching
   *   `[a-z0-9][a-z0-9._-]*`; (argument `factory`) when `factory` is not a function.
   */
  register(name: string, factory: PolicyFactory): this {
    if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
      throw new LetheError(
        'E_ARG',
        `must match ${NAME_PATTERN.source} (lower-case letters, digits, ".", "_", "-"), got ${JSON.stringify(name)}`,
        'name',
      );
    }
    if (this.factories.has(name)) {
      throw new LetheError('E_ARG', `a policy named "${name}" is already registered`, 'name');
    }
    if (typeof factory !== 'function') {
      throw new LetheError('E_ARG', 'must be a function (budget, context) => policy', 'factory');
    }
    this.factories.set(name, factory);
    return this;
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.factories.has(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.factories.keys()];
  }

  /**
   * The factory registered as `name`.
   *
   * @throws LetheError `E_ARG` (argument `argument`, default `policy`) for an unknown name,
   *   listing the valid ones.
   */
  factory(name: string, argument = 'policy'): PolicyFactory {
    const factory = this.factories.get(name);
    if (factory === undefined) {
      throw new LetheError(
        'E_ARG',
        `unknown policy ${JSON.stringify(name)}; valid policies: ${this.names().join(', ')}`,
        argument,
      );
    }
    return factory;
  }

  /**
   * Builds policy `name` for `budget` (`undefined`: the full cache).
   *
   * @throws LetheError `E_ARG` for an unknown name (listing the valid ones), `E_BUDGET` unless
   *   `budget.capacity` is a positive integer, plus the factory's own errors.
   */
  create(name: string, budget: PolicyBudget, context: PolicyContext): EvictionPolicy | undefined {
    const factory = this.factory(name);
    if (!(Number.isInteger(budget.capacity) && budget.capacity > 0)) {
      throw new LetheError(
        'E_BUDGET',
        `must be a positive integer, got ${budget.capacity}`,
        'budget.capacity',
      );
    }
    return factory(budget, context);
  }
}

/** Options of the heuristic factories of the default registry. */
export interface HeuristicFactoryOptions {
  /**
   * Amortisation slack as a fraction of the capacity: a round runs when a KV head holds more
   * than `capacity + ceil(slackFraction · capacity)` entries and shrinks it back to `capacity`,
   * so rounds run every `slack + 1` tokens instead of every token. Default
   * {@link DEFAULT_SLACK_FRACTION}; 0 evicts at every step (exact budget, slowest).
   */
  readonly slackFraction?: number;
}

/**
 * Default amortisation slack of the heuristic factories, 1/16 of the capacity (the
 * `@lethe/model` benchmark's 32 entries for a capacity of 512). The peak per head is then
 * `capacity + slack + 1` entries (measured after the append that triggers the round), so the
 * realised budget exceeds the requested one by about `(slack + 1) / L`, plus anchors where the
 * capacity is smaller than a method's sinks or window.
 */
export const DEFAULT_SLACK_FRACTION = 1 / 16;

/** kvpress's SnapKV observation window, used once the capacity is at least 4× as large. */
const SNAPKV_MAX_WINDOW = 64;

/** The slack (entries per head) added to `capacity` before a capacity trigger fires. */
export function amortisationSlack(
  capacity: number,
  slackFraction = DEFAULT_SLACK_FRACTION,
): number {
  if (!(Number.isFinite(slackFraction) && slackFraction >= 0)) {
    throw new LetheError(
      'E_ARG',
      `must be a finite number ≥ 0, got ${slackFraction}`,
      'slackFraction',
    );
  }
  return Math.ceil(capacity * slackFraction);
}

/**
 * The factory of heuristic `name` (see `HEURISTIC_NAMES`): `createHeuristic(name, { budget:
 * { capacity }, trigger: { whenLiveExceeds: capacity, slack } })` with the slack of
 * {@link amortisationSlack}. SnapKV's observation window is `min(64, max(1, floor(capacity / 4)))`:
 * its window is protected from eviction, so the default window of 64 would keep at least 64
 * entries per head whatever the budget.
 *
 * @throws LetheError `E_ARG` for a name that is not a heuristic, or a bad `slackFraction`.
 */
export function heuristicFactory(
  name: HeuristicName,
  options: HeuristicFactoryOptions = {},
): PolicyFactory {
  if (!HEURISTIC_NAMES.includes(name)) {
    throw new LetheError(
      'E_ARG',
      `unknown heuristic ${JSON.stringify(name)}; valid heuristics: ${HEURISTIC_NAMES.join(', ')}`,
      'name',
    );
  }
  const slackFraction = options.slackFraction ?? DEFAULT_SLACK_FRACTION;
  amortisationSlack(1, slackFraction);
  return ({ capacity }) => {
    const shared = {
      budget: { capacity },
      trigger: { whenLiveExceeds: capacity, slack: amortisationSlack(capacity, slackFraction) },
    };
    if (name === 'snapkv') {
      const windowSize = Math.min(SNAPKV_MAX_WINDOW, Math.max(1, Math.floor(capacity / 4)));
      return createHeuristic('snapkv', { ...shared, windowSize });
    }
    return createHeuristic(name, shared);
  };
}

/**
 * A fresh registry holding `full` (no eviction) and every heuristic eviction policy of
 * `@lethe/policies-heuristic` under its `createHeuristic` name, built by {@link heuristicFactory}.
 * Each call returns a new registry, so extending one never affects another.
 */
export function createDefaultRegistry(options: HeuristicFactoryOptions = {}): PolicyRegistry {
  const registry = new PolicyRegistry();
  registry.register(FULL_POLICY, () => undefined);
  for (const name of HEURISTIC_NAMES) registry.register(name, heuristicFactory(name, options));
  return registry;
}
