import { LetheError } from '@lethe/core';
import {
  type AnyPolicyProvider,
  isComputeBudget,
  type PolicyBudget,
  type PolicyProvider,
} from '@lethe/kv-cache';
import * as v from 'valibot';
import { ACTION_PRESETS, type ActionPreset, presetLevels } from '../actions/action-presets';
import { type ActionLevels, ActionSet, FULL_PRECISION_BITS } from '../actions/action-set';
import { SOL_DEFAULT_ALWAYS_DENSE, SOL_DEFAULT_HORIZON } from '../policy/sol-provider';
import { DriftAwarePolicy } from './drift-aware';
import { EntropyMatchedPolicy } from './entropy-matched';
import { FixedSchedulePolicy } from './fixed-schedule';
import { RandomSchedulePolicy } from './random-schedule';
import { RandomSteeredPolicy } from './random-steered';

const distinct = (levels: number[]) => new Set(levels).size === levels.length;

/** A non-empty list of distinct levels, each valid for its axis. */
const levelList = (level: v.GenericSchema<number>) =>
  v.pipe(
    v.array(level),
    v.minLength(1, 'must list at least one level'),
    v.check(distinct, 'must not repeat a level'),
  );

const RATE = v.pipe(v.number(), v.gtValue(0), v.maxValue(1));

const LEVELS = v.strictObject({
  tokenKeep: levelList(RATE),
  mlpInputKeep: levelList(RATE),
  activationBits: levelList(
    v.pipe(v.number(), v.integer(), v.minValue(2), v.maxValue(FULL_PRECISION_BITS)),
  ),
});

const PRESETS = Object.keys(ACTION_PRESETS) as ActionPreset[];

/** The options every baseline takes. */
const SCHEDULE_ENTRIES = {
  actions: v.pipe(
    v.optional(v.union([v.picklist(PRESETS), LEVELS]), '2L'),
    v.description(
      `the action set: a preset of the paper's App. B (${PRESETS.join(', ')}) or explicit levels { tokenKeep, mlpInputKeep, activationBits } — the same as the SOL policy compared with`,
    ),
  ),
  horizon: v.pipe(
    v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), SOL_DEFAULT_HORIZON),
    v.description(
      `decode steps per episode T: the KV refresh period and the span over which targets are matched (the paper: ${SOL_DEFAULT_HORIZON})`,
    ),
  ),
  refresh: v.pipe(
    v.optional(v.boolean(), true),
    v.description('recompute each episode’s KV entries densely when it ends (§4)'),
  ),
};

const SCHEDULE_OPTIONS = v.strictObject(SCHEDULE_ENTRIES);

const STEERED_OPTIONS = v.strictObject({
  ...SCHEDULE_ENTRIES,
  alwaysDense: v.pipe(
    v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), SOL_DEFAULT_ALWAYS_DENSE),
    v.description(
      'entries always read densely (sinks + window): a step with no more live entries does not count toward the budget',
    ),
  ),
});

type ScheduleOptions = v.InferOutput<typeof SCHEDULE_OPTIONS>;

/** The action set of the `actions` option. */
function actionSetOf(actions: ScheduleOptions['actions']): ActionSet {
  return new ActionSet(
    typeof actions === 'string' ? presetLevels(actions) : (actions as ActionLevels),
  );
}

/** The targets of a compute budget; `E_BUDGET` naming `budget` for a memory budget. */
function computeTargets(budget: PolicyBudget, name: string) {
  if (!isComputeBudget(budget)) {
    throw new LetheError('E_BUDGET', `"${name}" takes compute budgets ({ targets })`, 'budget');
  }
  return budget.targets;
}

const fixed: PolicyProvider<typeof SCHEDULE_OPTIONS> = {
  name: 'sol-fixed',
  summary:
    "SOL's fixed baseline: one static action per sequence, adjacent levels mixed across the batch (by a per-sequence draw) to match the per-axis compute targets (heuristic; compute budgets)",
  options: SCHEDULE_OPTIONS,
  budgetForms: ['compute'],
  /** @throws LetheError `E_BUDGET` naming `budget` for a memory budget. */
  build({ budget, options }) {
    const targets = computeTargets(budget, 'sol-fixed');
    return {
      compute: new FixedSchedulePolicy({
        actions: actionSetOf(options.actions),
        targets,
        horizon: options.horizon,
        refresh: options.refresh,
      }),
    };
  },
};

const random: PolicyProvider<typeof SCHEDULE_OPTIONS> = {
  name: 'sol-random',
  summary:
    "SOL's random schedules: an action drawn uniformly from the action set at every step, whatever the targets; compared at matched realised net keep rate (heuristic; compute budgets)",
  options: SCHEDULE_OPTIONS,
  budgetForms: ['compute'],
  /** @throws LetheError `E_BUDGET` naming `budget` for a memory budget. */
  build({ budget, options }) {
    computeTargets(budget, 'sol-random');
    return {
      compute: new RandomSchedulePolicy({
        actions: actionSetOf(options.actions),
        horizon: options.horizon,
        refresh: options.refresh,
      }),
    };
  },
};

const emc: PolicyProvider<typeof STEERED_OPTIONS> = {
  name: 'sol-emc',
  summary:
    "SOL's entropy-matched criterion: more compute after uncertain steps (normalised entropy of the previous logits), greedily steered to the per-axis compute targets (heuristic; compute budgets; needs the runtime's previous-step logits)",
  options: STEERED_OPTIONS,
  budgetForms: ['compute'],
  /** @throws LetheError `E_BUDGET` naming `budget` for a memory budget. */
  build({ budget, options }) {
    return {
      compute: new EntropyMatchedPolicy({
        actions: actionSetOf(options.actions),
        targets: computeTargets(budget, 'sol-emc'),
        horizon: options.horizon,
        refresh: options.refresh,
        alwaysDense: options.alwaysDense,
      }),
    };
  },
};

const dac: PolicyProvider<typeof STEERED_OPTIONS> = {
  name: 'sol-dac',
  summary:
    "SOL's drift-aware criterion: more compute after large changes of the final hidden state (cosine drift), greedily steered to the per-axis compute targets (heuristic; compute budgets)",
  options: STEERED_OPTIONS,
  budgetForms: ['compute'],
  /** @throws LetheError `E_BUDGET` naming `budget` for a memory budget. */
  build({ budget, options }) {
    return {
      compute: new DriftAwarePolicy({
        actions: actionSetOf(options.actions),
        targets: computeTargets(budget, 'sol-dac'),
        horizon: options.horizon,
        refresh: options.refresh,
        alwaysDense: options.alwaysDense,
      }),
    };
  },
};

const randomSteered: PolicyProvider<typeof STEERED_OPTIONS> = {
  name: 'sol-random-steered',
  summary:
    "random schedules at the requested budget: uniform random need scores under EMC's and DAC's budget steering, the uninformed control of SOL's baselines (heuristic; compute budgets)",
  options: STEERED_OPTIONS,
  budgetForms: ['compute'],
  /** @throws LetheError `E_BUDGET` naming `budget` for a memory budget. */
  build({ budget, options }) {
    return {
      compute: new RandomSteeredPolicy({
        actions: actionSetOf(options.actions),
        targets: computeTargets(budget, 'sol-random-steered'),
        horizon: options.horizon,
        refresh: options.refresh,
        alwaysDense: options.alwaysDense,
      }),
    };
  },
};

/**
 * The fixed baseline of the SOL paper (§5) as a provider: built for a compute budget
 * `{ targets }`, a {@link FixedSchedulePolicy}; options `actions` (a preset name or explicit
 * levels, default `'2L'`), `horizon` (16) and `refresh` (true).
 *
 * @throws LetheError from `build`: `E_BUDGET` naming `budget` for a memory budget; from the
 *   registry, `E_ARG` naming `options.<key>` for a bad option.
 */
export const solFixedProvider: PolicyProvider<typeof SCHEDULE_OPTIONS> = Object.freeze(fixed);

/**
 * The random schedules of the SOL paper (App. A) as a provider: a {@link RandomSchedulePolicy}
 * for a compute budget (whose targets it ignores); the options of {@link solFixedProvider}.
 *
 * @throws LetheError from `build`: `E_BUDGET` naming `budget` for a memory budget; from the
 *   registry, `E_ARG` naming `options.<key>` for a bad option.
 */
export const solRandomProvider: PolicyProvider<typeof SCHEDULE_OPTIONS> = Object.freeze(random);

/**
 * The entropy-matched criterion of the SOL paper (App. C) as a provider: an
 * {@link EntropyMatchedPolicy} for a compute budget; the options of {@link solFixedProvider} and
 * `alwaysDense` (6). Its policy needs the runtime to provide the previous step's logits.
 *
 * @throws LetheError from `build`: `E_BUDGET` naming `budget` for a memory budget; from the
 *   registry, `E_ARG` naming `options.<key>` for a bad option.
 */
export const solEmcProvider: PolicyProvider<typeof STEERED_OPTIONS> = Object.freeze(emc);

/**
 * The drift-aware criterion of the SOL paper (App. C) as a provider: a {@link DriftAwarePolicy}
 * for a compute budget; the options of {@link solEmcProvider}.
 *
 * @throws LetheError from `build`: `E_BUDGET` naming `budget` for a memory budget; from the
 *   registry, `E_ARG` naming `options.<key>` for a bad option.
 */
export const solDacProvider: PolicyProvider<typeof STEERED_OPTIONS> = Object.freeze(dac);

/**
 * Random schedules steered to the requested budget as a provider: a {@link RandomSteeredPolicy}
 * for a compute budget; the options of {@link solEmcProvider}.
 *
 * @throws LetheError from `build`: `E_BUDGET` naming `budget` for a memory budget; from the
 *   registry, `E_ARG` naming `options.<key>` for a bad option.
 */
export const solRandomSteeredProvider: PolicyProvider<typeof STEERED_OPTIONS> =
  Object.freeze(randomSteered);

/**
 * The baseline providers, in the order `sol-fixed`, `sol-random`, `sol-random-steered`,
 * `sol-emc`, `sol-dac`:
 * what a registry adds beside `solProvider` to compare SOL with them.
 *
 * @throws LetheError as each provider documents.
 */
export const SOL_BASELINE_PROVIDERS: readonly AnyPolicyProvider[] = Object.freeze([
  solFixedProvider,
  solRandomProvider,
  solRandomSteeredProvider,
  solEmcProvider,
  solDacProvider,
]);
