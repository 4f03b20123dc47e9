import { LetheError } from '@lethe/core';
import { budgetForm, validatePolicyBudget } from './policy-budget';
import { POLICY_MANIFEST, type PolicyDirectory } from './policy-directory';
import { parsePolicyOptions } from './policy-options';
import {
  type AnyPolicyProvider,
  type BudgetForm,
  type CapacityBudget,
  MEMORY_BUDGET_FORMS,
  type PolicyBudget,
  type PolicyContext,
  type PolicySet,
} from './provider';

const BUDGET_FORMS: readonly BudgetForm[] = ['capacity', 'rate', 'compute', 'read'];

/** Provider names: lower-case letters, digits, `.`, `_`, `-` (usable as CLI values and keys). */
export const POLICY_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;

/** What {@link PolicyRegistry.prepare} takes besides the name. */
export interface PrepareRequest {
  /** Options as given by a user (JSON); the trained options of `directory` sit under them. */
  readonly options?: unknown;
  /** The policy directory of a learned provider (required for one, refused for a heuristic). */
  readonly directory?: PolicyDirectory;
}

/**
 * A provider with its options validated and its parameters loaded: what a harness keeps for a
 * whole evaluation cell and builds a fresh policy set from for every batch.
 */
export interface PreparedPolicy {
  /** Provider name. */
  readonly name: string;
  /** The options in force: defaults, then the directory's trained options, then the user's. */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * The model checkpoint the policy runs with, relative to the policy directory (its manifest's
   * `model`), or undefined when it acts on the evaluated model.
   */
  readonly model: string | undefined;
  /** The budget forms {@link PreparedPolicy.build} takes (the provider's `budgetForms`). */
  readonly budgetForms: readonly BudgetForm[];
  /**
   * Builds the policies for one batch under `budget`; under a capacity budget, a set with an
   * eviction policy carries the capacity as its `ceiling` (see `PolicySet.ceiling`).
   *
   * @throws LetheError `E_BUDGET` for a malformed budget (see `validatePolicyBudget`) or one of a
   *   form the provider does not take (naming `budget`), and the
   *   provider's own errors (e.g. `E_BUDGET` when its anchors exceed the capacity, or for a
   *   budget form it does not support).
   */
  build(budget: PolicyBudget, context: PolicyContext): PolicySet;
  /**
   * Frees the loaded parameters' resources outside the JS heap (a learned gate's weight tensors);
   * policies built earlier must not run afterwards. Nothing to do for most providers; a second
   * call does nothing.
   */
  release(): void;
}

/**
 * Policies by name, built from a list of providers. The CLI, sweeps, the main job and the shared
 * test matrix all read one; registering a provider here is all it takes to reach them.
 *
 * @example
 * ```ts
 * const registry = new PolicyRegistry([fullCacheProvider, ...HEURISTIC_PROVIDERS]);
 * const snapkv = await registry.prepare('snapkv', { options: { windowSize: 8 } });
 * const { eviction } = snapkv.build({ capacity: 64 }, context);
 * ```
 */
export class PolicyRegistry {
  private readonly providers = new Map<string, AnyPolicyProvider>();

  /**
   * @throws LetheError `E_ARG` naming `providers[i].name` for a name that does not match
   *   {@link POLICY_NAME_PATTERN} or repeats an earlier one, `providers[i].budgetForms` for an
   *   empty list or an unknown form, or `providers[i]` for an entry without a `build` function or
   *   an options schema.
   */
  constructor(providers: readonly AnyPolicyProvider[]) {
    providers.forEach((provider, i) => {
      const argument = `providers[${i}]`;
      if (
        typeof provider !== 'object' ||
        provider === null ||
        typeof provider.build !== 'function' ||
        typeof provider.options !== 'object'
      ) {
        throw new LetheError('E_ARG', 'must be a PolicyProvider (name, options, build)', argument);
      }
      const { name } = provider;
      if (typeof name !== 'string' || !POLICY_NAME_PATTERN.test(name)) {
        throw new LetheError(
          'E_ARG',
          `must match ${POLICY_NAME_PATTERN.source}, got ${JSON.stringify(name)}`,
          `${argument}.name`,
        );
      }
      const forms = provider.budgetForms;
      if (
        forms !== undefined &&
        !(
          Array.isArray(forms) &&
          forms.length > 0 &&
          forms.every((form) => BUDGET_FORMS.includes(form))
        )
      ) {
        throw new LetheError(
          'E_ARG',
          `must be a non-empty list of ${BUDGET_FORMS.join(', ')}, got ${JSON.stringify(forms)}`,
          `${argument}.budgetForms`,
        );
      }
      if (this.providers.has(name)) {
        throw new LetheError('E_ARG', `repeats the provider "${name}"`, `${argument}.name`);
      }
      this.providers.set(name, provider);
    });
  }

  /** Registered names, in the order given. */
  names(): string[] {
    return [...this.providers.keys()];
  }

  /** Every provider, in the order given. */
  list(): AnyPolicyProvider[] {
    return [...this.providers.values()];
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.providers.has(name);
  }

  /**
   * The provider registered as `name`.
   *
   * @throws LetheError `E_ARG` naming `argument` (default `policy`) for an unknown name, listing
   *   the registered ones.
   */
  provider(name: string, argument = 'policy'): AnyPolicyProvider {
    const provider = this.providers.get(name);
    if (provider === undefined) {
      throw new LetheError(
        'E_ARG',
        `unknown policy ${JSON.stringify(name)}; valid policies: ${this.names().join(', ')}`,
        argument,
      );
    }
    return provider;
  }

  /**
   * Validates the options of policy `name` (the directory's trained options under the user's,
   * defaults filled in) and loads its parameters, once, for any number of builds.
   *
   * @throws LetheError `E_ARG` naming `policy` for an unknown name; `policyDir` for a learned
   *   policy without a directory or a heuristic with one; `options.<key>` for a bad option —
   *   the directory's `policy.json` (the message starting `options.<key>:`) when the bad value
   *   is the manifest's, not overridden by the request;
   *   `E_FORMAT` naming the manifest when it belongs to another provider; the provider's loader
   *   errors.
   */
  async prepare(name: string, request: PrepareRequest = {}): Promise<PreparedPolicy> {
    const provider = this.provider(name);
    const { directory } = request;
    if (provider.learned === undefined && directory !== undefined) {
      throw new LetheError(
        'E_ARG',
        `"${name}" has no learned parameters; give no policy directory`,
        'policyDir',
      );
    }
    if (provider.learned !== undefined && directory === undefined) {
      throw new LetheError(
        'E_ARG',
        `"${name}" is a learned policy: give the directory of its trained parameters`,
        'policyDir',
      );
    }
    if (directory !== undefined && directory.manifest.provider !== name) {
      throw new LetheError(
        'E_FORMAT',
        `holds a "${directory.manifest.provider}" policy, not "${name}"`,
        `${directory.files.location}/${POLICY_MANIFEST}`,
      );
    }
    const given = request.options ?? {};
    if (typeof given !== 'object' || given === null || Array.isArray(given)) {
      throw new LetheError('E_ARG', 'must be a JSON object', 'options');
    }
    let options: Readonly<Record<string, unknown>>;
    try {
      options = parsePolicyOptions(provider.options, {
        ...(directory?.manifest.options ?? {}),
        ...given,
      }) as Readonly<Record<string, unknown>>;
    } catch (error) {
      throw directory === undefined
        ? error
        : manifestOptionError(error, directory, given as object);
    }
    const parameters =
      directory === undefined ? undefined : await provider.learned!.load(directory);
    let released = false;
    const budgetForms = Object.freeze([...(provider.budgetForms ?? MEMORY_BUDGET_FORMS)]);
    return Object.freeze({
      name,
      options,
      model: directory?.manifest.model,
      budgetForms,
      build(budget: PolicyBudget, context: PolicyContext): PolicySet {
        const checked = validatePolicyBudget(budget);
        const form = budgetForm(checked);
        if (!budgetForms.includes(form)) {
          throw new LetheError(
            'E_BUDGET',
            `"${name}" takes ${budgetForms.join(' or ')} budgets, not a ${form} budget`,
            'budget',
          );
        }
        const set = provider.build({
          budget: checked,
          options,
          context,
          parameters,
        });
        return form === 'capacity' && set.eviction !== undefined
          ? { ...set, ceiling: (checked as CapacityBudget).capacity }
          : set;
      },
      release(): void {
        if (released || directory === undefined) return;
        released = true;
        provider.learned!.release?.(parameters);
      },
    });
  }
}

/**
 * An option error re-issued about the directory's manifest when the bad option's value came from
 * it (the request did not override it): `[E_ARG] <dir>/policy.json: options.window: …` rather
 * than blaming the caller's options. Other errors are returned unchanged.
 */
function manifestOptionError(error: unknown, directory: PolicyDirectory, given: object): unknown {
  if (!(error instanceof LetheError) || error.argument === undefined) return error;
  const key = /^options\.([^.[]+)/.exec(error.argument)?.[1];
  if (key === undefined || Object.hasOwn(given, key)) return error;
  if (!Object.hasOwn(directory.manifest.options, key)) return error;
  const prefix = `[${error.code}] ${error.argument}: `;
  const message = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return new LetheError(
    error.code,
    `${error.argument}: ${message}`,
    `${directory.files.location}/${POLICY_MANIFEST}`,
  );
}
