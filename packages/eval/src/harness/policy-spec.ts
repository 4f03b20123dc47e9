import { LetheError } from '@lethe/core';
import { COMPOSITION_SEPARATOR, FULL_CACHE } from '@lethe/kv-cache';
import { validateBudgetFraction, validateBudgetList } from './budget';
import { assertJson, isPlainObject, type JsonValue } from './json';

/**
 * Cell labels: a policy name, or names joined by `+` (a composition's default label, `namm+sol`).
 */
export const POLICY_LABEL_PATTERN = /^[a-z0-9][a-z0-9._-]*(\+[a-z0-9][a-z0-9._-]*)*$/;

/** One part of a composed policy (see {@link PolicySpec.compose}). */
export interface PolicyPartSpec {
  /** Registry name of the provider. */
  readonly name: string;
  /** Provider options (JSON). */
  readonly options: Readonly<Record<string, JsonValue>>;
  /** Policy directory of a learned provider, or null. */
  readonly dir: string | null;
  /**
   * The kept fraction this part always runs at (in (0, 1], mapped to its budget form as the
   * cell's is), or null for the cell's budget.
   */
  readonly budget: number | null;
}

/**
 * One policy of a sweep: a registry provider, the options it runs with, and for a learned one the
 * directory of its trained parameters. Its `label` names its cells (`CellKey.policy`), so one
 * provider can appear twice with other options — or twice under one label with disjoint `tasks`
 * (one trained directory per task).
 */
export interface PolicySpec {
  /**
   * Cell label, unique among the policies that run on a task (default: the provider name); two
   * entries may share it only when their `tasks` are disjoint.
   */
  readonly label: string;
  /** Registry name of the provider; for a composition its parts' names joined by `+`. */
  readonly name: string;
  /**
   * Provider options (JSON; defaults are filled in by the provider when it is prepared); `{}`
   * for a composition (its parts carry theirs).
   */
  readonly options: Readonly<Record<string, JsonValue>>;
  /** Policy directory of a learned provider (`policy.json` + parameters), or null (always for a composition). */
  readonly dir: string | null;
  /**
   * The tasks (names of the sweep's tasks) this policy runs on, or null for all — e.g. a learned
   * policy trained for one task.
   */
  readonly tasks: readonly string[] | null;
  /**
   * The budgets this policy runs at, each one of the sweep's (absent: every budget of each task
   * it runs on) — e.g. a learned policy whose evicted blocks no longer fit in a cache below 12.5 %,
   * or a compute baseline whose lowest level is 10 %: "where a method holds". Like `tasks` it
   * decides which cells there are, not what a cell computes.
   */
  readonly budgets?: readonly number[];
  /**
   * The parts of a composed policy (kvpress's `ComposedPress`): policies that fill different
   * slots of one policy set — an eviction policy and a compute policy (`namm+sol`,
   * `h2o+sol-fixed`), a read selector with either — each under its own budget form, built from
   * the cell's fraction or the part's own. Absent for a single policy.
   */
  readonly compose?: readonly PolicyPartSpec[];
  /**
   * Present (`true`) when the policy's directories run on the task's model though they were
   * trained on another — zero-shot transfer, as NAMM's Table 5 moves a memory evolved on one LM
   * to others. Without it a directory whose manifest names another base model is refused. A
   * policy that is a model (NGC) runs its own model either way.
   */
  readonly transfer?: true;
}

const FIELDS = ['label', 'name', 'options', 'dir', 'tasks', 'budgets', 'compose', 'transfer'];
const PART_FIELDS = ['name', 'options', 'dir', 'budget'];

/** The parts a spec runs: its composition's, or the single policy as one part at the cell's budget. */
export function policyParts(spec: PolicySpec): readonly PolicyPartSpec[] {
  return spec.compose ?? [{ name: spec.name, options: spec.options, dir: spec.dir, budget: null }];
}

/**
 * Reads one entry of a sweep's `policies`: a provider name (`"h2o"`), `{ name, label?, options?,
 * dir?, tasks?, budgets?, transfer? }`, or a composition `{ compose: [part, part, …], label?,
 * tasks?, budgets?, transfer? }` whose parts are names or `{ name, options?, dir?, budget? }` (`budget`: the part's
 * own kept fraction). Task names are checked against the sweep by `validateSweepConfig`.
 *
 * @throws LetheError `E_ARG` naming `argument` or its field: an unknown field, a name not in
 *   `known` (listing them), a label not matching {@link POLICY_LABEL_PATTERN}, non-JSON options,
 *   an empty directory, the full cache under another label or with options or budgets, a `budgets`
 *   that is not a non-empty list of distinct fractions, a `transfer` that is not a boolean or is
 *   true without a directory to transfer; for a composition,
 *   fewer than two parts, `name` / `options` / `dir` beside `compose`, a part that is the full
 *   cache or repeats another (naming `compose[j].…`); `E_BUDGET` naming `compose[j].budget` or
 *   `budgets[k]` outside (0, 1].
 */
export function policySpec(
  entry: unknown,
  argument: string,
  known?: readonly string[],
): PolicySpec {
  let raw: Record<string, unknown>;
  if (typeof entry === 'string') {
    raw = { name: entry };
  } else if (isPlainObject(entry)) {
    raw = entry;
    checkFields(raw, FIELDS, argument);
  } else {
    throw new LetheError(
      'E_ARG',
      'must be a policy name, { name, label, options, dir, tasks, budgets, transfer } or { compose, label, tasks, budgets, transfer }',
      argument,
    );
  }
  const compose = raw.compose === undefined ? undefined : composition(raw, argument, known);
  const single =
    compose === undefined
      ? policyPart(typeof entry === 'string' ? entry : raw, argument, known, false)
      : undefined;
  const name = single?.name ?? compose!.map((p) => p.name).join(COMPOSITION_SEPARATOR);
  const label = raw.label === undefined ? name : raw.label;
  if (typeof label !== 'string' || !POLICY_LABEL_PATTERN.test(label)) {
    throw new LetheError(
      'E_ARG',
      `must match ${POLICY_LABEL_PATTERN.source}, got ${JSON.stringify(label)}`,
      `${argument}.label`,
    );
  }
  if ((name === FULL_CACHE) !== (label === FULL_CACHE)) {
    throw new LetheError(
      'E_ARG',
      `the label "${FULL_CACHE}" belongs to the full cache and nothing else`,
      `${argument}.label`,
    );
  }
  const tasks = raw.tasks ?? null;
  if (
    tasks !== null &&
    !(Array.isArray(tasks) && tasks.length > 0 && tasks.every((t) => typeof t === 'string'))
  ) {
    throw new LetheError('E_ARG', 'must be a non-empty array of task names', `${argument}.tasks`);
  }
  const budgets =
    raw.budgets === undefined ? undefined : validateBudgetList(raw.budgets, `${argument}.budgets`);
  if (budgets !== undefined && name === FULL_CACHE) {
    throw new LetheError(
      'E_ARG',
      `the full cache runs once, at budget 1: it takes no budgets`,
      `${argument}.budgets`,
    );
  }
  const transfer = raw.transfer ?? false;
  if (typeof transfer !== 'boolean') {
    throw new LetheError('E_ARG', 'must be true or false', `${argument}.transfer`);
  }
  if (transfer && (compose ?? [single!]).every((part) => part.dir === null)) {
    throw new LetheError(
      'E_ARG',
      'is for a learned policy: this one has no policy directory to run on another model',
      `${argument}.transfer`,
    );
  }
  return {
    label,
    name,
    options: single?.options ?? {},
    dir: single?.dir ?? null,
    tasks,
    ...(budgets === undefined ? {} : { budgets }),
    ...(compose === undefined ? {} : { compose }),
    ...(transfer ? { transfer } : {}),
  };
}

/** Refuses the fields of `raw` outside `fields`, naming `<argument>.<key>`. */
function checkFields(raw: Record<string, unknown>, fields: readonly string[], argument: string) {
  for (const key of Object.keys(raw)) {
    if (!fields.includes(key)) {
      throw new LetheError(
        'E_ARG',
        `unknown field; valid fields: ${fields.join(', ')}`,
        `${argument}.${key}`,
      );
    }
  }
}

/** The parts of a `{ compose }` entry (see {@link policySpec}). */
function composition(
  raw: Record<string, unknown>,
  argument: string,
  known: readonly string[] | undefined,
): PolicyPartSpec[] {
  const list = raw.compose;
  if (!Array.isArray(list) || list.length < 2) {
    throw new LetheError(
      'E_ARG',
      'must list two or more policies (names or { name, options, dir, budget })',
      `${argument}.compose`,
    );
  }
  const parts = list.map((entry, j) => {
    const at = `${argument}.compose[${j}]`;
    if (isPlainObject(entry)) checkFields(entry, PART_FIELDS, at);
    else if (typeof entry !== 'string') {
      throw new LetheError('E_ARG', 'must be a policy name or { name, options, dir, budget }', at);
    }
    return policyPart(entry, at, known, true);
  });
  parts.forEach((part, j) => {
    if (part.name === FULL_CACHE) {
      throw new LetheError(
        'E_ARG',
        `"${FULL_CACHE}" is no part: a composition without eviction keeps the full cache already`,
        `${argument}.compose[${j}]`,
      );
    }
    if (parts.findIndex((p) => p.name === part.name) !== j) {
      throw new LetheError(
        'E_ARG',
        `repeats the policy "${part.name}"`,
        `${argument}.compose[${j}]`,
      );
    }
  });
  // A validated spec (name "a+b", options {}, dir null) reads back as itself.
  const name = parts.map((p) => p.name).join(COMPOSITION_SEPARATOR);
  const canonical: Record<string, (value: unknown) => boolean> = {
    name: (value) => value === name,
    options: (value) => isPlainObject(value) && Object.keys(value).length === 0,
    dir: (value) => value === null,
  };
  for (const [key, fits] of Object.entries(canonical)) {
    if (raw[key] !== undefined && !fits(raw[key])) {
      throw new LetheError(
        'E_ARG',
        'belongs to a part: a composition takes { compose, label, tasks, budgets, transfer }',
        `${argument}.${key}`,
      );
    }
  }
  return parts;
}

/** A single policy or a composition's part: a name or `{ name, options?, dir?, budget? }`. */
function policyPart(
  entry: unknown,
  argument: string,
  known: readonly string[] | undefined,
  isPart: boolean,
): PolicyPartSpec {
  const raw: Record<string, unknown> =
    typeof entry === 'string' ? { name: entry } : (entry as Record<string, unknown>);
  const name = raw.name;
  const nameArgument = typeof entry === 'string' ? argument : `${argument}.name`;
  if (typeof name !== 'string' || name.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty string', nameArgument);
  }
  if (known !== undefined && !known.includes(name)) {
    throw new LetheError(
      'E_ARG',
      `unknown policy ${JSON.stringify(name)}; valid policies: ${known.join(', ')}`,
      nameArgument,
    );
  }
  const options = raw.options === undefined ? {} : raw.options;
  if (!isPlainObject(options)) {
    throw new LetheError('E_ARG', 'must be an object', `${argument}.options`);
  }
  assertJson(options, `${argument}.options`);
  const dir = raw.dir ?? null;
  if (dir !== null && (typeof dir !== 'string' || dir.length === 0)) {
    throw new LetheError('E_ARG', 'must be a non-empty directory path', `${argument}.dir`);
  }
  const budget =
    isPart && raw.budget !== undefined && raw.budget !== null
      ? validateBudgetFraction(raw.budget, `${argument}.budget`)
      : null;
  return { name, options: options as Record<string, JsonValue>, dir, budget };
}

/** Whether `spec` runs on the task named `task`. */
export function runsOnTask(spec: PolicySpec, task: string): boolean {
  return spec.tasks === null || spec.tasks.includes(task);
}

/** Whether `spec` runs at `budget` (given it runs on the task). */
export function runsAtBudget(spec: PolicySpec, budget: number): boolean {
  return spec.budgets === undefined || spec.budgets.includes(budget);
}

/** The policy of a cell: the spec with the cell's label that runs on its task, if any. */
export function policyOfCell(
  policies: readonly PolicySpec[],
  key: { readonly task: string; readonly policy: string },
): PolicySpec | undefined {
  return policies.find((p) => p.label === key.policy && runsOnTask(p, key.task));
}
