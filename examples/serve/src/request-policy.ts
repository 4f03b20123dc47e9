import { listPolicies, sequenceBudget } from '@lethe/eval';
import {
  FULL_CACHE,
  type PolicyRegistry,
  type PolicySet,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import { type DecoderModel, policyContextOf } from '@lethe/model';
import { invalidRequest } from './api-error';
import {
  composedBuilder,
  namesComposition,
  type PreparedPart,
  requestedParts,
} from './policy-composition';
import { renamed } from './policy-errors';
import type { LetheExtension } from './request-schemas';

/** What a request asked of its memory, as the response reports it back. */
export interface PolicyChoice {
  /** The policy's name, or the composition's (`h2o+sol-fixed`). */
  readonly name: string;
  /** The fraction, or a composition's fraction per part, as requested. */
  readonly budget: number | Readonly<Record<string, number>>;
}

/** A request's policy, prepared: what each of its sequences' policies are built from. */
export interface RequestPolicy {
  readonly choice: PolicyChoice;
  /**
   * The policies of one sequence of `promptTokens` + `maxTokens` (a 400 naming the request's
   * field when its budget or options cannot be met).
   */
  build(model: DecoderModel, promptTokens: number, maxTokens: number): PolicySet;
  /** Frees what preparing it loaded for this request (never a trained policy's parameters). */
  release(): void;
}

/** A learned policy the server was given at start-up: its directory, prepared once. */
export interface LearnedPolicy {
  /** The name requests use in `lethe.policy`. */
  readonly name: string;
  /** Its parameters, loaded (options as it was trained with them, under any given at start-up). */
  readonly prepared: PreparedPolicy;
  /** Served models it cannot run on (another hidden size, vocabulary, …), with the reason. */
  readonly unfit: ReadonlyMap<string, string>;
}

/**
 * Builds each sequence's policies from a request's `lethe` extension: a heuristic by name from
 * the registry (default `full`) with its options checked by the provider's schema, or a learned
 * policy by the name it was given at start-up (its directory read then, never from a request),
 * or a composition of them (`h2o+sol-fixed`: `composePolicies` of `@lethe/kv-cache`); and the
 * budget — a fraction in (0, 1] of the sequence's full-cache length (prompt + `max_tokens`) for
 * a memory policy, and as the entries each decode step reads per KV head for a read selector
 * (Quest); the requested net keep-rate for a compute policy (as `lethe eval` and
 * `lethe generate` read `--budget`); a composition's parts each in their own form.
 */
export class RequestPolicies {
  constructor(
    private readonly registry: PolicyRegistry,
    private readonly learned: ReadonlyMap<string, LearnedPolicy> = new Map(),
  ) {}

  /**
   * What `GET /v1/policies` lists: every policy a request may name — the registry's heuristics
   * with their budget forms and options (as `lethe policies --json` prints them), then the
   * trained policies given at start-up with their provider, budget forms, the options they run
   * with (fixed: trained, or given at start-up) and the served models they cannot run on.
   */
  listing() {
    const heuristics = listPolicies(this.registry)
      .filter((listing) => !listing.learned)
      .map((listing) => ({
        id: listing.name,
        object: 'policy',
        summary: listing.summary,
        learned: false,
        budget_forms: listing.budgetForms,
        options: listing.options,
      }));
    const learned = [...this.learned.values()].map((policy) => ({
      id: policy.name,
      object: 'policy',
      provider: policy.prepared.name,
      learned: true,
      budget_forms: policy.prepared.budgetForms,
      trained_options: policy.prepared.options,
      unfit_models: Object.fromEntries(policy.unfit),
    }));
    return [...heuristics, ...learned];
  }

  /** Every name a request may give. */
  names(): string[] {
    const heuristics = this.registry.list().filter((provider) => provider.learned === undefined);
    return [...heuristics.map((provider) => provider.name), ...this.learned.keys()];
  }

  /**
   * The policy a request asked for, validated (a 400 naming `lethe.policy`, `lethe.budget` or
   * `lethe.options.<key>` otherwise) — or the composition it named (`h2o+sol-fixed`: see
   * `requestedParts`; its heuristic parts prepared with their own options, its trained parts the
   * shared ones). Release it when the request is done.
   */
  async prepare(extension: LetheExtension | undefined, model: string): Promise<RequestPolicy> {
    const name = extension?.policy ?? FULL_CACHE;
    if (namesComposition(name)) return this.prepareComposition(extension!, model);
    const budget = extension?.budget ?? 1;
    const options = extension?.options ?? {};
    if (typeof budget === 'object') {
      throw invalidRequest(
        'lethe.budget',
        `an object gives each part of a composition its own budget; "${name}" is one policy: give a number`,
      );
    }
    if (name === FULL_CACHE && budget !== 1) {
      throw invalidRequest('lethe.budget', `must be 1 for the full cache, got ${budget}`);
    }
    const learned = this.learned.get(name);
    if (learned !== undefined) {
      checkFits(learned, model);
      if (Object.keys(options).length > 0) {
        throw invalidRequest(
          'lethe.options',
          `"${name}" is a trained policy: its options are the ones it was trained with`,
        );
      }
      return singlePolicy(learned.prepared, { name, budget }, () => {});
    }
    if (!this.names().includes(name)) {
      throw invalidRequest(
        'lethe.policy',
        `unknown policy "${name}"; this server has ${this.names().join(', ')}`,
        'unknown_policy',
      );
    }
    let prepared: PreparedPolicy;
    try {
      prepared = await this.registry.prepare(name, { options });
    } catch (error) {
      throw renamed(error);
    }
    return singlePolicy(prepared, { name, budget }, () => prepared.release());
  }

  /** A composition's parts, prepared (those prepared here released if one fails). */
  private async prepareComposition(
    extension: LetheExtension,
    model: string,
  ): Promise<RequestPolicy> {
    const owned: PreparedPolicy[] = [];
    const release = () => {
      for (const prepared of owned) prepared.release();
    };
    const parts: PreparedPart[] = [];
    try {
      for (const part of requestedParts(extension, this.names())) {
        const learned = this.learned.get(part.name);
        if (learned !== undefined) {
          checkFits(learned, model);
          if (Object.keys(part.options).length > 0) {
            throw invalidRequest(
              part.fields.options,
              `"${part.name}" is a trained policy: its options are the ones it was trained with (or given at start-up)`,
            );
          }
          parts.push({ ...part, prepared: learned.prepared, trained: true });
          continue;
        }
        const prepared = await this.registry
          .prepare(part.name, { options: part.options })
          .catch((error: unknown) => {
            throw renamed(error, part.fields);
          });
        owned.push(prepared);
        parts.push({ ...part, prepared, trained: false });
      }
    } catch (error) {
      release();
      throw error;
    }
    return {
      choice: { name: extension.policy!, budget: extension.budget ?? 1 },
      build: composedBuilder(parts),
      release,
    };
  }
}

/** A 400 naming `lethe.policy` when `learned` cannot run on `model`. */
function checkFits(learned: LearnedPolicy, model: string): void {
  const reason = learned.unfit.get(model);
  if (reason !== undefined) {
    throw invalidRequest(
      'lethe.policy',
      `"${learned.name}" cannot run on model "${model}": ${reason}`,
      'policy_model_mismatch',
    );
  }
}

/**
 * One policy as a request's: each sequence's budget a fraction of its full-cache length (prompt
 * + `max_tokens`) in the policy's budget form, its errors named by the request's fields.
 */
function singlePolicy(
  prepared: PreparedPolicy,
  choice: PolicyChoice & { readonly budget: number },
  release: () => void,
): RequestPolicy {
  return {
    choice,
    build(model, promptTokens, maxTokens) {
      try {
        const budget = sequenceBudget(
          choice.budget,
          promptTokens + maxTokens,
          null,
          prepared.budgetForms,
        );
        return prepared.build(budget, policyContextOf(model, 1));
      } catch (error) {
        throw renamed(error);
      }
    },
    release,
  };
}
