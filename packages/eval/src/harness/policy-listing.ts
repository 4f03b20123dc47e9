import {
  type BudgetForm,
  describePolicyOptions,
  MEMORY_BUDGET_FORMS,
  type PolicyRegistry,
} from '@lethe/kv-cache';

/** One provider as `lethe policies --json` prints it (and a server's `GET /v1/policies`). */
export interface PolicyListing {
  readonly name: string;
  readonly summary: string;
  /** Whether it loads trained parameters (`--policy-dir`). */
  readonly learned: boolean;
  /** The budget forms it takes: `capacity`, `rate`, `compute`. */
  readonly budgetForms: readonly BudgetForm[];
  readonly options: readonly { name: string; default: unknown; description?: string }[];
}

/** Every provider of `registry` with its budget forms and options, defaults and descriptions. */
export function listPolicies(registry: PolicyRegistry): PolicyListing[] {
  return registry.list().map((provider) => ({
    name: provider.name,
    summary: provider.summary,
    learned: provider.learned !== undefined,
    budgetForms: [...(provider.budgetForms ?? MEMORY_BUDGET_FORMS)],
    options: describePolicyOptions(provider.options).map((option) => ({
      name: option.name,
      default: option.default,
      ...(option.description === undefined ? {} : { description: option.description }),
    })),
  }));
}
