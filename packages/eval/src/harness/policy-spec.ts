import { LetheError } from '@lethe/core';
import { FULL_CACHE, POLICY_NAME_PATTERN } from '@lethe/kv-cache';
import { assertJson, isPlainObject, type JsonValue } from './json';

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
  /** Registry name of the provider. */
  readonly name: string;
  /** Provider options (JSON; defaults are filled in by the provider when it is prepared). */
  readonly options: Readonly<Record<string, JsonValue>>;
  /** Policy directory of a learned provider (`policy.json` + parameters), or null. */
  readonly dir: string | null;
  /**
   * The tasks (names of the sweep's tasks) this policy runs on, or null for all — e.g. a learned
   * policy trained for one task.
   */
  readonly tasks: readonly string[] | null;
}

const FIELDS = ['label', 'name', 'options', 'dir', 'tasks'];

/**
 * Reads one entry of a sweep's `policies`: a provider name (`"h2o"`) or
 * `{ name, label?, options?, dir?, tasks? }`. Task names are checked against the sweep by
 * `validateSweepConfig`.
 *
 * @throws LetheError `E_ARG` naming `argument` or its field: an unknown field, a name not in
 *   `known` (listing them), a label not matching the name pattern, non-JSON options, an empty
 *   directory, or the full cache under another label or with options.
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
    for (const key of Object.keys(raw)) {
      if (!FIELDS.includes(key)) {
        throw new LetheError(
          'E_ARG',
          `unknown field; valid fields: ${FIELDS.join(', ')}`,
          `${argument}.${key}`,
        );
      }
    }
  } else {
    throw new LetheError(
      'E_ARG',
      'must be a policy name or { name, label, options, dir, tasks }',
      argument,
    );
  }
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
  const label = raw.label === undefined ? name : raw.label;
  if (typeof label !== 'string' || !POLICY_NAME_PATTERN.test(label)) {
    throw new LetheError(
      'E_ARG',
      `must match ${POLICY_NAME_PATTERN.source}, got ${JSON.stringify(label)}`,
      `${argument}.label`,
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
  return { label, name, options: options as Record<string, JsonValue>, dir, tasks };
}

/** Whether `spec` runs on the task named `task`. */
export function runsOnTask(spec: PolicySpec, task: string): boolean {
  return spec.tasks === null || spec.tasks.includes(task);
}

/** The policy of a cell: the spec with the cell's label that runs on its task, if any. */
export function policyOfCell(
  policies: readonly PolicySpec[],
  key: { readonly task: string; readonly policy: string },
): PolicySpec | undefined {
  return policies.find((p) => p.label === key.policy && runsOnTask(p, key.task));
}
