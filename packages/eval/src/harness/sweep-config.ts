import { LetheError } from '@lethe/core';
import { validateSampling } from '@lethe/model';
import { requireObject } from './arguments';
import { validateBudgetList } from './budget';
import { assertJson, isPlainObject, type JsonValue } from './json';
import { nonEmptyList, rejectDuplicates } from './lists';
import { type PolicySpec, policySpec, runsOnTask } from './policy-spec';

/** One task of a sweep: a registry name and its options (echoed into the results). */
export interface TaskSpec {
  /** Task registry name (`createTask` name). */
  readonly name: string;
  /**
   * The task's name in cells, reports and `policies[i].tasks`, unique within a sweep — so one
   * registry task can stand in a sweep several times with other options (the suite's members).
   * Present only when it differs from `name`; see {@link taskLabel}.
   */
  readonly label?: string;
  /** Options passed to `createTask` (JSON). */
  readonly options: Readonly<Record<string, JsonValue>>;
  /**
   * This task's prefill chunk, overriding the sweep's `prefillChunk` (absent: the sweep's; `null`:
   * each prompt whole before the first check, e.g. the rounds NGC is trained with). A
   * chunk of c tokens lets a cache pass its budget's ceiling by c − 1 entries before the round
   * after it, so tasks with short full caches want small chunks.
   */
  readonly prefillChunk?: number | null;
  /**
   * This task's seeds, overriding the sweep's `seeds` (absent: the sweep's) — e.g. more seeds for
   * a task whose cells are cheap.
   */
  readonly seeds?: readonly number[];
  /**
   * This task's budget rule, overriding the sweep's `rateEvery` (absent: the sweep's): a rate
   * schedule every n tokens, or `null` for ceilings — so one sweep can hold a task under both
   * rules (two labels), e.g. NGC on the schedule it was trained with and at the common ceilings.
   * Present only when it differs from the sweep's.
   */
  readonly rateEvery?: number | null;
  /**
   * This task's budgets, overriding the sweep's `budgets` (absent: the sweep's) — e.g. the rates
   * a learned policy was trained at, on a task under its own `rateEvery`. Present only when they
   * differ from the sweep's.
   */
  readonly budgets?: readonly number[];
}

/** Sampling of every generation cell (see `SamplingOptions` of `@lethe/model`). */
export interface SweepSampling {
  /** Softmax temperature; 0 is greedy. */
  readonly temperature: number;
  /** Keep the k most likely tokens (0: all). */
  readonly topK: number;
  /** Nucleus mass in (0, 1]. */
  readonly topP: number;
}

/**
 * A policy × budget sweep, normalised by {@link validateSweepConfig} (every default filled in).
 * Cells are (task, policy, budget, seed) combinations; `full` runs once per (task, seed), at
 * budget 1. The whole object is embedded in the results file, so two sweeps with equal configs
 * compute the same cells.
 */
export interface SweepConfig {
  /** Tasks, each with its options. */
  readonly tasks: readonly TaskSpec[];
  /**
   * Policies, each a registry provider with its options (and directory, for a learned one); a
   * bare name in the JSON stands for `{ label: name, name, options: {}, dir: null }`. `full` is
   * the full cache.
   */
  readonly policies: readonly PolicySpec[];
  /**
   * Budget fractions in (0, 1]: of each example's full-cache peak (a ceiling, see
   * `capacityFor`), or with `rateEvery` the fraction of the live entries each round keeps.
   */
  readonly budgets: readonly number[];
  /**
   * The budget rule. `null` (the default): a budget `b` is a ceiling of `⌈b · P⌉` entries per KV
   * head, `P` the example's own full-cache peak. A positive integer δ: the rate schedule of the
   * NGC paper (§5.1) — every δ tokens, prefill included, every policy keeps `⌈b · live⌉` entries
   * per KV head (eviction rate ε = 1 − b), so all methods evict at the same rounds and rate.
   */
  readonly rateEvery: number | null;
  /** Seeds: each selects the task examples and the sampling / eviction streams. */
  readonly seeds: readonly number[];
  /** Examples (prompts or documents) per cell: indices `0 … examplesPerCell − 1` of the seed. */
  readonly examplesPerCell: number;
  /** Completions sampled per prompt (generation tasks; pass@k needs more than one). Default 1. */
  readonly samplesPerExample: number;
  /**
   * The k of pass@k, each ≤ `samplesPerExample`. Default: the powers of two below
   * `samplesPerExample` and `samplesPerExample` itself when it exceeds 1, else none.
   */
  readonly passAtK: readonly number[];
  /** Sampling. Default: greedy with one sample, temperature 1 with several. */
  readonly sampling: SweepSampling;
  /** Sequences per generation batch (each with its own cache). Default 16. */
  readonly batchSize: number;
  /**
   * Generation tasks: prefill each prompt in chunks of this many tokens with an eviction check
   * after each, so the budget bounds the cache during the prompt too (`null`, the default: the
   * whole prompt goes in before the first check, so the peak is at least the prompt). A task's
   * own `prefillChunk` overrides it.
   */
  readonly prefillChunk: number | null;
  /**
   * Model checkpoint directory (`config.json` + `model.safetensors`) per task label, or per
   * registry name for every task of that name without a directory under its label (see
   * {@link checkpointOf}). A task without one needs a model provider (`RunSweepOptions.models`).
   */
  readonly checkpoints: Readonly<Record<string, string>>;
}

/**
 * A `policies` entry standing for every provider of `KnownNames.untrained` the config does not
 * list by name, in registry order — so a sweep over "everything" needs no edit when a policy
 * package adds a heuristic (`knownPolicies` leaves compute policies out: they are listed by name).
 */
export const EVERY_UNTRAINED_POLICY = '*';

/** Names a config may be checked against. */
export interface KnownNames {
  /** Valid policy provider names (e.g. `registry.names()`). */
  readonly policies?: readonly string[];
  /**
   * The providers that need no policy directory, in registry order: what a
   * {@link EVERY_UNTRAINED_POLICY} entry expands to (see `knownPolicies`).
   */
  readonly untrained?: readonly string[];
  /** Valid task names (e.g. `TASK_NAMES`). */
  readonly tasks?: readonly string[];
}

/** Default {@link SweepConfig.batchSize}. */
export const DEFAULT_BATCH_SIZE = 16;

const FIELDS = [
  'tasks',
  'policies',
  'budgets',
  'rateEvery',
  'seeds',
  'examplesPerCell',
  'samplesPerExample',
  'passAtK',
  'sampling',
  'batchSize',
  'prefillChunk',
  'checkpoints',
] as const;

/**
 * Validates a sweep configuration (typically parsed JSON) and returns it normalised, with
 * every default filled in and keys in a fixed order. A task may be given as a bare name
 * (`"countdown"`) or as `{ name, label, options, prefillChunk, seeds, rateEvery, budgets }`.
 *
 * @throws LetheError `E_BUDGET` naming `budgets[i]` for a budget outside (0, 1]; `E_ARG` naming
 *   the field for anything else: an unknown field, a missing or mistyped one, an empty or
 *   duplicated list entry (two tasks under one label included), a policy label shared by two
 *   policies on a common task, an unknown task or policy name (when `known` lists them), a
 *   malformed policy entry (see `policySpec`), a pass@k above `samplesPerExample`, greedy
 *   sampling with several samples, a checkpoint under neither a task label nor a task name; `null` where a value is needed (`null` stands for the default only where
 *   the normalised config writes it: `rateEvery`, `prefillChunk`, a policy's `dir` and
 *   `tasks`); `E_ARG` naming `known` or its field when it is not an object of name lists.
 */
export function validateSweepConfig(json: unknown, known: KnownNames = {}): SweepConfig {
  checkKnownNames(known);
  if (!isPlainObject(json)) throw new LetheError('E_ARG', 'must be a JSON object', 'config');
  for (const key of Object.keys(json)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      throw new LetheError('E_ARG', `unknown field; valid fields: ${FIELDS.join(', ')}`, key);
    }
  }
  const tasks = nonEmptyList(json.tasks, 'tasks').map((entry, i) =>
    taskSpec(entry, `tasks[${i}]`, known.tasks),
  );
  const labels = tasks.map(taskLabel);
  rejectDuplicates(
    labels,
    (i) => `tasks[${i}].${tasks[i]!.label === undefined ? 'name' : 'label'}`,
  );

  const policies = expandPolicies(nonEmptyList(json.policies, 'policies'), known).map(
    ([entry, argument]) => policySpec(entry, argument, known.policies),
  );
  rejectSharedLabels(policies, labels);
  policies.forEach((policy, i) => {
    policy.tasks?.forEach((task, j) => {
      if (!labels.includes(task)) {
        throw new LetheError(
          'E_ARG',
          `names no task label of the sweep (${labels.join(', ')})`,
          `policies[${i}].tasks[${j}]`,
        );
      }
    });
  });

  const budgets = validateBudgetList(json.budgets, 'budgets');
  policies.forEach((policy, i) => {
    const offered = new Set(
      tasks
        .filter((task) => runsOnTask(policy, taskLabel(task)))
        .flatMap((t) => t.budgets ?? budgets),
    );
    policy.budgets?.forEach((budget, k) => {
      if (!offered.has(budget)) {
        throw new LetheError(
          'E_ARG',
          `is no budget of the tasks this policy runs on (${[...offered].join(', ')})`,
          `policies[${i}].budgets[${k}]`,
        );
      }
    });
  });
  const rateEvery =
    json.rateEvery === undefined || json.rateEvery === null
      ? null
      : positiveInteger(json.rateEvery, 'rateEvery');
  // A task's own rule and budgets are kept only where they differ from the sweep's (one normal
  // form).
  const ruled = tasks.map((task) => {
    const { rateEvery: ownRule, budgets: ownBudgets, ...rest } = task;
    return {
      ...rest,
      ...(ownRule === undefined || ownRule === rateEvery ? {} : { rateEvery: ownRule }),
      ...(ownBudgets === undefined || sameNumbers(ownBudgets, budgets)
        ? {}
        : { budgets: ownBudgets }),
    };
  });

  const seeds = seedList(json.seeds, 'seeds');

  const examplesPerCell = positiveInteger(json.examplesPerCell, 'examplesPerCell');
  const samplesPerExample =
    json.samplesPerExample === undefined
      ? 1
      : positiveInteger(json.samplesPerExample, 'samplesPerExample');

  let passAtK: number[];
  if (json.passAtK === undefined) {
    passAtK = defaultPassAtK(samplesPerExample);
  } else {
    if (!Array.isArray(json.passAtK)) {
      throw new LetheError('E_ARG', 'must be an array of integers', 'passAtK');
    }
    passAtK = json.passAtK.map((k, i) => {
      const value = positiveInteger(k, `passAtK[${i}]`);
      if (value > samplesPerExample) {
        throw new LetheError(
          'E_ARG',
          `must be ≤ samplesPerExample (${samplesPerExample}), got ${value}`,
          `passAtK[${i}]`,
        );
      }
      return value;
    });
    rejectDuplicates(passAtK, (i) => `passAtK[${i}]`);
  }

  const sampling = samplingOf(json.sampling, samplesPerExample);
  const batchSize =
    json.batchSize === undefined
      ? DEFAULT_BATCH_SIZE
      : positiveInteger(json.batchSize, 'batchSize');

  const prefillChunk =
    json.prefillChunk === undefined || json.prefillChunk === null
      ? null
      : positiveInteger(json.prefillChunk, 'prefillChunk');

  const checkpoints: Record<string, string> = {};
  if (json.checkpoints !== undefined) {
    if (!isPlainObject(json.checkpoints)) {
      throw new LetheError(
        'E_ARG',
        'must be an object mapping task labels or names to directories',
        'checkpoints',
      );
    }
    for (const [task, dir] of Object.entries(json.checkpoints)) {
      const argument = `checkpoints.${task}`;
      if (!labels.includes(task) && !tasks.some((t) => t.name === task)) {
        throw new LetheError(
          'E_ARG',
          `names no task label or name of the sweep (${[...new Set([...labels, ...tasks.map((t) => t.name)])].join(', ')})`,
          argument,
        );
      }
      if (typeof dir !== 'string' || dir.length === 0) {
        throw new LetheError('E_ARG', 'must be a non-empty directory path', argument);
      }
      checkpoints[task] = dir;
    }
  }

  return {
    tasks: ruled,
    policies,
    budgets,
    rateEvery,
    seeds,
    examplesPerCell,
    samplesPerExample,
    passAtK,
    sampling,
    batchSize,
    prefillChunk,
    checkpoints,
  };
}

/**
 * Checks the `known` argument of {@link validateSweepConfig}: an object whose given fields are
 * arrays of names.
 *
 * @throws LetheError `E_ARG` naming `known` or `known.<field>` otherwise.
 */
function checkKnownNames(known: KnownNames): void {
  requireObject(known, 'known', 'an object of name lists { policies, untrained, tasks }');
  for (const field of ['policies', 'untrained', 'tasks'] as const) {
    const names = known[field];
    if (
      names !== undefined &&
      !(Array.isArray(names) && names.every((n) => typeof n === 'string'))
    ) {
      throw new LetheError('E_ARG', 'must be an array of names', `known.${field}`);
    }
  }
}

/** A non-empty list of distinct non-negative safe integers (seeds), naming `argument[i]`. */
function seedList(value: unknown, argument: string): number[] {
  const seeds = nonEmptyList(value, argument).map((seed, i) => {
    if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
      throw new LetheError(
        'E_ARG',
        `must be a non-negative safe integer, got ${JSON.stringify(seed)}`,
        `${argument}[${i}]`,
      );
    }
    return seed;
  });
  rejectDuplicates(seeds, (i) => `${argument}[${i}]`);
  return seeds;
}

/** Powers of two below `samples`, then `samples`, when `samples` > 1; else none. */
function defaultPassAtK(samples: number): number[] {
  if (samples <= 1) return [];
  const ks: number[] = [];
  for (let k = 1; k < samples; k *= 2) ks.push(k);
  ks.push(samples);
  return ks;
}

function taskSpec(entry: unknown, argument: string, knownTasks?: readonly string[]): TaskSpec {
  let name: unknown;
  let label: unknown;
  let options: unknown = {};
  let prefillChunk: number | null | undefined;
  let seeds: number[] | undefined;
  let rateEvery: number | null | undefined;
  let budgets: number[] | undefined;
  if (typeof entry === 'string') {
    name = entry;
  } else if (isPlainObject(entry)) {
    for (const key of Object.keys(entry)) {
      if (!TASK_FIELDS.includes(key)) {
        throw new LetheError(
          'E_ARG',
          `unknown field; valid fields: ${TASK_FIELDS.join(', ')}`,
          `${argument}.${key}`,
        );
      }
    }
    name = entry.name;
    label = entry.label;
    if (entry.options !== undefined) options = entry.options;
    if (entry.prefillChunk !== undefined) {
      prefillChunk =
        entry.prefillChunk === null
          ? null
          : positiveInteger(entry.prefillChunk, `${argument}.prefillChunk`);
    }
    if (entry.seeds !== undefined) seeds = seedList(entry.seeds, `${argument}.seeds`);
    if (entry.rateEvery !== undefined) {
      rateEvery =
        entry.rateEvery === null ? null : positiveInteger(entry.rateEvery, `${argument}.rateEvery`);
    }
    if (entry.budgets !== undefined)
      budgets = validateBudgetList(entry.budgets, `${argument}.budgets`);
  } else {
    throw new LetheError('E_ARG', 'must be a task name or { name, label, options }', argument);
  }
  if (typeof name !== 'string' || name.length === 0) {
    throw new LetheError('E_ARG', 'must be a non-empty string', `${argument}.name`);
  }
  if (knownTasks !== undefined && !knownTasks.includes(name)) {
    throw new LetheError(
      'E_ARG',
      `unknown task ${JSON.stringify(name)}; valid tasks: ${knownTasks.join(', ')}`,
      `${argument}.name`,
    );
  }
  if (label !== undefined && (typeof label !== 'string' || label.length === 0)) {
    throw new LetheError('E_ARG', 'must be a non-empty string', `${argument}.label`);
  }
  if (!isPlainObject(options)) {
    throw new LetheError('E_ARG', 'must be an object', `${argument}.options`);
  }
  assertJson(options, `${argument}.options`);
  return {
    name,
    ...(label === undefined || label === name ? {} : { label }),
    options: options as Record<string, JsonValue>,
    ...(prefillChunk === undefined ? {} : { prefillChunk }),
    ...(seeds === undefined ? {} : { seeds }),
    ...(rateEvery === undefined ? {} : { rateEvery }),
    ...(budgets === undefined ? {} : { budgets }),
  };
}

/** The fields of a task entry. */
const TASK_FIELDS = ['name', 'label', 'options', 'prefillChunk', 'seeds', 'rateEvery', 'budgets'];

/** Whether two lists hold the same numbers in the same order. */
function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/** A task's label in cells and reports: its own, else its registry name. */
export function taskLabel(task: TaskSpec): string {
  return task.label ?? task.name;
}

/** The budgets the cells of the task labelled `task` run at in `config`: its own, else the sweep's. */
export function budgetsOf(config: SweepConfig, task: string): readonly number[] {
  return config.tasks.find((t) => taskLabel(t) === task)?.budgets ?? config.budgets;
}

/** The seeds the cells of the task labelled `task` run with in `config`: its own, else the sweep's. */
export function seedsOf(config: SweepConfig, task: string): readonly number[] {
  return config.tasks.find((t) => taskLabel(t) === task)?.seeds ?? config.seeds;
}

/**
 * The prefill chunk of the task labelled `task` in `config`: its own, else the sweep's (null:
 * prompts whole).
 *
 * @throws LetheError the errors of {@link validateSweepConfig} for an invalid `config`.
 */
export function prefillChunkOf(config: SweepConfig, task: string): number | null {
  const sweep = validateSweepConfig(config);
  const own = sweep.tasks.find((t) => taskLabel(t) === task)?.prefillChunk;
  return own === undefined ? sweep.prefillChunk : own;
}

/**
 * The budget rule of the task labelled `task` in `config`: its own `rateEvery`, else the
 * sweep's (a number: a rate schedule every that many tokens; null: ceilings).
 */
export function rateEveryOf(config: SweepConfig, task: string): number | null {
  const own = config.tasks.find((t) => taskLabel(t) === task)?.rateEvery;
  return own === undefined ? config.rateEvery : own;
}

/**
 * The checkpoint directory of the task labelled `task` in `config`: the one under its label,
 * else the one under its registry name, else `undefined`.
 */
export function checkpointOf(config: SweepConfig, task: string): string | undefined {
  const spec = config.tasks.find((t) => taskLabel(t) === task);
  if (spec === undefined) return undefined;
  const under = (key: string) =>
    Object.hasOwn(config.checkpoints, key) ? config.checkpoints[key] : undefined;
  return under(task) ?? under(spec.name);
}

function samplingOf(raw: unknown, samples: number): SweepSampling {
  const given = raw === undefined ? {} : raw;
  if (!isPlainObject(given)) throw new LetheError('E_ARG', 'must be an object', 'sampling');
  for (const key of Object.keys(given)) {
    if (key !== 'temperature' && key !== 'topK' && key !== 'topP') {
      throw new LetheError(
        'E_ARG',
        'unknown field; valid fields: temperature, topK, topP',
        `sampling.${key}`,
      );
    }
  }
  const sampling = {
    temperature: given.temperature === undefined ? (samples > 1 ? 1 : 0) : given.temperature,
    topK: given.topK === undefined ? 0 : given.topK,
    topP: given.topP === undefined ? 1 : given.topP,
  };
  for (const [key, value] of Object.entries(sampling)) {
    if (typeof value !== 'number') {
      throw new LetheError(
        'E_ARG',
        `must be a number, got ${JSON.stringify(value)}`,
        `sampling.${key}`,
      );
    }
  }
  const checked = sampling as SweepSampling;
  validateSampling(checked);
  if (checked.temperature === 0 && samples > 1) {
    throw new LetheError(
      'E_ARG',
      `is 0 (greedy) with samplesPerExample ${samples}: every sample would be the same`,
      'sampling.temperature',
    );
  }
  return checked;
}

function positiveInteger(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new LetheError(
      'E_ARG',
      `must be a positive integer, got ${JSON.stringify(value)}`,
      argument,
    );
  }
  return value;
}

/**
 * Refuses two policies under one label that run on a common task (their cells would collide).
 *
 * @throws LetheError `E_ARG` naming `policies[i].label` of the later one.
 */
function rejectSharedLabels(policies: readonly PolicySpec[], tasks: readonly string[]): void {
  policies.forEach((policy, i) => {
    const first = policies.findIndex(
      (other, j) =>
        j < i &&
        other.label === policy.label &&
        tasks.some((task) => runsOnTask(other, task) && runsOnTask(policy, task)),
    );
    if (first >= 0) {
      throw new LetheError(
        'E_ARG',
        `repeats entry ${first} (${JSON.stringify(policy.label)}) on a task both run on; a label may repeat only for disjoint "tasks"`,
        `policies[${i}].label`,
      );
    }
  });
}

/**
 * The entries of `policies` with each {@link EVERY_UNTRAINED_POLICY} — `"*"`, or
 * `{ "name": "*", "tasks": [...] }` for some tasks only — replaced by the untrained providers not
 * listed elsewhere for every task (each with those `tasks`), each paired with its argument name.
 * A provider listed for some tasks only stays in: give that entry a `label` of its own.
 *
 * @throws LetheError `E_ARG` naming `policies[i]` for a `"*"` when `known.untrained` is absent,
 *   or for an object `"*"` with a field besides `name` and `tasks`.
 */
function expandPolicies(entries: unknown[], known: KnownNames): [unknown, string][] {
  // A provider listed for every task is left out; one listed for some tasks (`tasks`) stays in.
  const named = new Set(
    entries.flatMap((entry) => {
      if (typeof entry === 'string') return [entry];
      return isPlainObject(entry) && typeof entry.name === 'string' && entry.tasks === undefined
        ? [entry.name]
        : [];
    }),
  );
  return entries.flatMap((entry, i): [unknown, string][] => {
    const argument = `policies[${i}]`;
    const wildcard = isPlainObject(entry) && entry.name === EVERY_UNTRAINED_POLICY;
    if (entry !== EVERY_UNTRAINED_POLICY && !wildcard) return [[entry, argument]];
    if (known.untrained === undefined) {
      throw new LetheError(
        'E_ARG',
        `"${EVERY_UNTRAINED_POLICY}" stands for every registered policy that needs no directory: validate against a registry`,
        argument,
      );
    }
    const extra = wildcard
      ? Object.keys(entry).filter((key) => key !== 'name' && key !== 'tasks')
      : [];
    if (extra.length > 0) {
      throw new LetheError(
        'E_ARG',
        `"${EVERY_UNTRAINED_POLICY}" takes only "tasks" (every policy keeps its own options), got ${extra.map((key) => JSON.stringify(key)).join(', ')}`,
        argument,
      );
    }
    const restricted = wildcard && entry.tasks !== undefined ? { tasks: entry.tasks } : undefined;
    return known.untrained
      .filter((name) => !named.has(name))
      .map((name) => [restricted === undefined ? name : { name, ...restricted }, argument]);
  });
}
