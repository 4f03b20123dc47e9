import { LetheError } from '@lethe/core';
import { isPlainObject, sequenceBudget } from '@lethe/eval';
import {
  COMPOSITION_SEPARATOR,
  composePolicies,
  FULL_CACHE,
  type PolicyBudget,
  type PolicyContext,
  type PolicySet,
  type PreparedPolicy,
} from '@lethe/kv-cache';
import { type DecoderModel, policyContextOf } from '@lethe/model';
import { invalidRequest, plainMessage } from './api-error';
import { type PolicyFields, renamed } from './policy-errors';
import type { LetheExtension } from './request-schemas';

/** One part of the composition a request named, with its budget and options. */
export interface RequestedPart {
  /** A heuristic's or a trained policy's name. */
  readonly name: string;
  /** Its budget fraction: the request's number, or its own entry of the request's object. */
  readonly fraction: number;
  /** Its options as the request gave them (`{}` when none). */
  readonly options: Readonly<Record<string, unknown>>;
  /** The fields its errors land in. */
  readonly fields: PolicyFields;
}

/** Whether `lethe.policy` names a composition (`h2o+sol-fixed`). */
export function namesComposition(policy: string): boolean {
  return policy.includes(COMPOSITION_SEPARATOR);
}

/**
 * The parts of the composition `extension.policy` names, in order, read from the request: two
 * or more names of `known` joined by `+`, none repeated, none the full cache; the budget a
 * fraction for every part or `{ "<part>": fraction }` with an entry for each (default 1); the
 * options `{ "<part>": { … } }` (default none).
 *
 * @throws ApiError 400 naming `lethe.policy` (an empty, repeated or full-cache part; an unknown
 *   one with code `unknown_policy`), `lethe.budget` (a part without a budget) or
 *   `lethe.budget.<key>` (no such part), `lethe.options.<key>` (no such part, or not an object).
 *   (The schema has checked that a budget object's entries are fractions.)
 */
export function requestedParts(
  extension: LetheExtension,
  known: readonly string[],
): RequestedPart[] {
  const policy = extension.policy!;
  const names = policy.split(COMPOSITION_SEPARATOR);
  names.forEach((name, i) => {
    if (name === '') {
      throw invalidRequest(
        'lethe.policy',
        `"${policy}" has an empty part: join two or more policy names with "${COMPOSITION_SEPARATOR}" (h2o${COMPOSITION_SEPARATOR}sol-fixed)`,
      );
    }
    if (name === FULL_CACHE) {
      throw invalidRequest(
        'lethe.policy',
        `"${FULL_CACHE}" is no part of a composition: one without an eviction policy keeps the full cache already`,
      );
    }
    if (names.indexOf(name) !== i) {
      throw invalidRequest('lethe.policy', `"${policy}" repeats "${name}"`);
    }
    if (!known.includes(name)) {
      throw invalidRequest(
        'lethe.policy',
        `unknown policy "${name}" in "${policy}"; this server has ${known.join(', ')}`,
        'unknown_policy',
      );
    }
  });
  const budget = extension.budget ?? 1;
  const options = extension.options ?? {};
  if (typeof budget === 'object') {
    checkKeyedByPart(budget, names, policy, 'lethe.budget');
    const missing = names.filter((name) => !(name in budget));
    if (missing.length > 0) {
      throw invalidRequest(
        'lethe.budget',
        `gives no budget for ${missing.join(', ')}: give each part of "${policy}" its own, or one number for all`,
      );
    }
  }
  checkKeyedByPart(options, names, policy, 'lethe.options');
  const perPart = typeof budget === 'object';
  return names.map((name) => {
    const own = (options as Record<string, unknown>)[name] ?? {};
    if (!isPlainObject(own)) {
      throw invalidRequest(`lethe.options.${name}`, `must be an object of ${name}'s options`);
    }
    return {
      name,
      fraction: perPart ? budget[name]! : budget,
      options: own,
      fields: {
        options: `lethe.options.${name}`,
        budget: perPart ? `lethe.budget.${name}` : 'lethe.budget',
        part: name,
      },
    };
  });
}

/** Refuses a key of the object at `field` that is no part, naming `<field>.<key>`. */
function checkKeyedByPart(
  value: object,
  names: readonly string[],
  policy: string,
  field: string,
): void {
  for (const key of Object.keys(value)) {
    if (!names.includes(key)) {
      throw invalidRequest(
        `${field}.${key}`,
        `"${key}" is no part of "${policy}": ${field} of a composition is keyed by its parts (${names.join(', ')})`,
      );
    }
  }
}

/** A part of a composition, prepared. */
export interface PreparedPart extends RequestedPart {
  readonly prepared: PreparedPolicy;
  /** Whether it is a trained policy given at start-up (its options fixed then). */
  readonly trained: boolean;
}

/** A part's failure while building, carried through `composePolicies` to be named by its part. */
class PartFailure extends Error {
  constructor(
    readonly part: number,
    readonly error: unknown,
  ) {
    super(`part ${part} failed`);
    this.name = 'PartFailure';
  }
}

/** `fn()`, its failure wrapped as part `i`'s. */
function asPart<T>(i: number, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new PartFailure(i, error);
  }
}

/**
 * Builds each sequence's set of a composition: every part's budget from its fraction of the
 * sequence's full-cache length (in the part's budget form, as a single policy's), the sets built
 * and composed by `composePolicies`. Errors are named by the request's fields: a part's budget or
 * options as {@link renamed} names a single policy's, within the part's; two parts filling one
 * slot → `lethe.policy`; a compute policy's KV refresh beside an eviction policy or read
 * selector → `lethe.options.<part>.refresh`, or `lethe.policy` for a trained part (its options
 * were fixed at start-up: `--policy-options`).
 */
export function composedBuilder(
  parts: readonly PreparedPart[],
): (model: DecoderModel, promptTokens: number, maxTokens: number) => PolicySet {
  // each part's build errors carry its index through `composePolicies`; the request releases
  // the parts it prepared itself (a trained part is shared), so `composed.release` is not called
  const composed = composePolicies(
    parts.map(
      ({ prepared }, i): PreparedPolicy => ({
        ...prepared,
        build: (budget: PolicyBudget, context: PolicyContext) =>
          asPart(i, () => prepared.build(budget, context)),
      }),
    ),
  );
  return (model: DecoderModel, promptTokens: number, maxTokens: number): PolicySet => {
    try {
      const budgets = parts.map((part, i) =>
        asPart(i, () =>
          sequenceBudget(part.fraction, promptTokens + maxTokens, null, part.prepared.budgetForms),
        ),
      );
      return composed.build(budgets, policyContextOf(model, 1));
    } catch (error) {
      if (error instanceof PartFailure) throw renamed(error.error, parts[error.part]!.fields);
      throw compositionError(error, parts);
    }
  };
}

/** An error of `composePolicySets` (naming `sets[i]…`) as the request's; others unchanged. */
function compositionError(error: unknown, parts: readonly PreparedPart[]): unknown {
  if (!(error instanceof LetheError)) return error;
  const match = /^sets\[(\d+)\](\.compute\.refreshEvery)?$/.exec(error.argument ?? '');
  if (match === null) return error;
  const part = parts[Number(match[1])]!;
  const message = plainMessage(error);
  if (match[2] === undefined) return invalidRequest('lethe.policy', `lethe.policy: ${message}`);
  if (part.trained) {
    return invalidRequest(
      'lethe.policy',
      `lethe.policy: ${message}. "${part.name}" is a trained policy whose options are fixed at start-up: serve it with --policy-options '${part.name}={"refresh":false}' to compose it`,
    );
  }
  const field = `${part.fields.options}.refresh`;
  return invalidRequest(field, `${field}: ${message}`);
}
