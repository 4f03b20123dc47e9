import { LetheError } from '@lethe/core';
import { listPolicies, sequenceBudget } from '@lethe/eval';
import {
  FULL_CACHE,
  type PolicyRegistry,
  type PolicySet,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import { type DecoderModel, policyContextOf } from '@lethe/model';
import { invalidRequest, plainMessage } from './api-error';
import type { LetheExtension } from './request-schemas';

/** What a request asked of its memory, as the response reports it back. */
export interface PolicyChoice {
  readonly name: string;
  readonly budget: number;
}

/** A learned policy the server was given at start-up: its directory, prepared once. */
export interface LearnedPolicy {
  /** The name requests use in `lethe.policy`. */
  readonly name: string;
  /** Its parameters, loaded (options as it was trained with them). */
  readonly prepared: PreparedPolicy;
  /** Served models it cannot run on (another hidden size, vocabulary, …), with the reason. */
  readonly unfit: ReadonlyMap<string, string>;
}

/**
 * Builds each sequence's policies from a request's `lethe` extension: a heuristic by name from
 * the registry (default `full`) with its options checked by the provider's schema, or a learned
 * policy by the name it was given at start-up (its directory read then, never from a request);
 * and the budget — a fraction in (0, 1] of the sequence's full-cache length (prompt +
 * `max_tokens`) for a memory policy, and as the entries each decode step reads per KV head for a
 * read selector (Quest); the requested net keep-rate for a compute policy (as `lethe eval` reads
 * `--budget`; `lethe generate` takes memory policies only).
 */
export class RequestPolicies {
  constructor(
    private readonly registry: PolicyRegistry,
    private readonly learned: ReadonlyMap<string, LearnedPolicy> = new Map(),
  ) {}

  /**
   * What `GET /v1/policies` lists: every policy a request may name — the registry's heuristics
   * with their budget forms and options (as `lethe policies --json` prints them), then the
   * trained policies given at start-up with their provider, budget forms, the options they were
   * trained with (fixed) and the served models they cannot run on.
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
   * `lethe.options.<key>` otherwise). Release it when the request is done.
   */
  async prepare(
    extension: LetheExtension | undefined,
    model: string,
  ): Promise<{ choice: PolicyChoice; prepared: PreparedPolicy; release(): void }> {
    const name = extension?.policy ?? FULL_CACHE;
    const budget = extension?.budget ?? 1;
    const options = extension?.options ?? {};
    if (name === FULL_CACHE && budget !== 1) {
      throw invalidRequest('lethe.budget', `must be 1 for the full cache, got ${budget}`);
    }
    const learned = this.learned.get(name);
    if (learned !== undefined) {
      const reason = learned.unfit.get(model);
      if (reason !== undefined) {
        throw invalidRequest(
          'lethe.policy',
          `"${name}" cannot run on model "${model}": ${reason}`,
          'policy_model_mismatch',
        );
      }
      if (Object.keys(options).length > 0) {
        throw invalidRequest(
          'lethe.options',
          `"${name}" is a trained policy: its options are the ones it was trained with`,
        );
      }
      return { choice: { name, budget }, prepared: learned.prepared, release: () => {} };
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
    return { choice: { name, budget }, prepared, release: () => prepared.release() };
  }

  /** The policies of one sequence of `promptTokens` + `maxTokens` under `prepared`. */
  build(
    prepared: PreparedPolicy,
    choice: PolicyChoice,
    model: DecoderModel,
    promptTokens: number,
    maxTokens: number,
  ): PolicySet {
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
  }
}
/**
 * A registry error about the request, renamed into the request's fields: the policy's name →
 * `lethe.policy`, one of its options → `lethe.options.<key>`, anything about the budget — a
 * malformed one, or one too small for the policy's anchors — → `lethe.budget`; the message
 * without the library's code and argument, the code `invalid_value`.
 */
function renamed(error: unknown): unknown {
  if (!(error instanceof LetheError)) return error;
  const argument = error.argument ?? '';
  const field =
    argument === 'policy' || argument === 'name'
      ? 'lethe.policy'
      : argument.startsWith('options')
        ? `lethe.${argument}`
        : 'lethe.budget';
  return invalidRequest(field, `${field}: ${plainMessage(error)}`);
}
