import { LetheError } from '@lethe/core';
import type { JsonValue } from '@lethe/eval';
import { parseNumberFlag, TASK_NAMES } from '@lethe/eval';
import type { BackendName } from '@lethe/tensor';
import { DEFAULT_MODEL_SIZE, type ModelSize } from './model-size';
import {
  PRETRAIN_DEFAULTS,
  type PretrainOptions,
  type PretrainSettings,
} from './pretrain-settings';
import { shellQuote } from './shell-quote';
import { formatTaskOptionFlag, parseTaskOptionFlag } from './task-option-flag';
import { TRAINING_SEED_OFFSET } from './training-seed';

const D = PRETRAIN_DEFAULTS;

/** One flag of `lethe pretrain`. */
export interface PretrainFlag {
  /** The flag, e.g. `--kv-heads`. */
  readonly flag: string;
  /** The `PretrainOptions` field it sets (`modelSize.kvHeads`), or `backend`. */
  readonly field: string;
  /** Whether it may be given several times (`--task-option`). */
  readonly repeatable: boolean;
  /** What it means. */
  readonly description: string;
}

const flag = (flag: string, field: string, description: string, repeatable = false) =>
  Object.freeze({ flag, field, description, repeatable });

/**
 * The flags of `lethe pretrain`. {@link pretrainCommand} writes all of them (defaults
 * included) and {@link parsePretrainFlags} reads them back.
 */
export const PRETRAIN_FLAGS: readonly PretrainFlag[] = Object.freeze([
  flag('--task', 'task', `task registry name (${TASK_NAMES.join(', ')})`),
  flag(
    '--task-option',
    'taskOptions',
    'a task option as key=value, repeatable (e.g. count=3)',
    true,
  ),
  flag('--hidden', 'modelSize.hidden', `hidden width (default ${DEFAULT_MODEL_SIZE.hidden})`),
  flag('--layers', 'modelSize.layers', `decoder layers (default ${DEFAULT_MODEL_SIZE.layers})`),
  flag('--heads', 'modelSize.heads', `query heads (default ${DEFAULT_MODEL_SIZE.heads})`),
  flag('--kv-heads', 'modelSize.kvHeads', `KV heads (default ${DEFAULT_MODEL_SIZE.kvHeads})`),
  flag(
    '--intermediate',
    'modelSize.intermediate',
    `MLP width (default ${DEFAULT_MODEL_SIZE.intermediate})`,
  ),
  flag(
    '--init',
    'init',
    'start from the weights of this task-model directory (same tokenizer and architecture, or fewer layers: the missing ones go on top as the identity; or narrower: widened with its function kept) instead of a random init',
  ),
  flag('--steps', 'steps', `optimizer updates (default ${D.steps})`),
  flag('--batch-size', 'batchSize', `sequences per update (default ${D.batchSize})`),
  flag(
    '--micro-batch-size',
    'microBatchSize',
    'sequences per forward and backward pass, ≤ batch size: gradients of the parts summed into one update (default the batch size)',
  ),
  flag(
    '--seed',
    'seed',
    `initialisation and batch-order seed; examples come from task seed ${TRAINING_SEED_OFFSET} + seed (default ${D.seed})`,
  ),
  flag('--lr', 'lr', `peak learning rate, warmup then cosine decay (default ${D.lr})`),
  flag('--warmup', 'warmupSteps', 'warmup updates (default min(100, steps / 10))'),
  flag('--min-lr-ratio', 'minLrRatio', `final learning rate / peak (default ${D.minLrRatio})`),
  flag('--weight-decay', 'weightDecay', `AdamW weight decay (default ${D.weightDecay})`),
  flag('--clip-norm', 'clipNorm', `gradient-norm clip (default ${D.clipNorm})`),
  flag(
    '--bucket-steps',
    'bucketSteps',
    `generation tasks: updates whose examples are sorted by length together, 1 = off (default ${D.bucketSteps})`,
  ),
  flag(
    '--loss-on',
    'lossOn',
    'generation tasks: the tokens the loss falls on, completion (default) or all (the prompt too)',
  ),
  flag(
    '--window',
    'window',
    `lm only: tokens per training window (default min(documentChars + 1, ${D.maxWindow}))`,
  ),
  flag(
    '--eval-examples',
    'evalExamples',
    `held-out examples of the final full-cache score, 0 = none (default ${D.evalExamples})`,
  ),
  flag('--eval-seed', 'evalSeed', `seed of those examples (default ${D.evalSeed})`),
  flag(
    '--eval-batch-size',
    'evalBatchSize',
    `generation batch size of that evaluation (default ${D.evalBatchSize})`,
  ),
  flag(
    '--probe-examples',
    'probeExamples',
    'validation examples scored with the full cache while training, kept out of training, 0 = none (default 0)',
  ),
  flag(
    '--probe-seed',
    'probeSeed',
    'seed of the validation examples, not the eval seed (default eval seed + 1)',
  ),
  flag(
    '--probe-every',
    'probeEvery',
    `updates between two validation scores, and one at the end (default min(${D.probeEvery}, steps))`,
  ),
  flag('--out', 'out', 'output model directory (default models/<task>)'),
  flag('--backend', 'backend', 'tfjs backend: wasm (default), cpu, webgpu, auto'),
]);

const NUMBER_FIELDS = new Set([
  'steps',
  'batchSize',
  'microBatchSize',
  'seed',
  'lr',
  'warmupSteps',
  'minLrRatio',
  'weightDecay',
  'clipNorm',
  'window',
  'bucketSteps',
  'evalExamples',
  'evalSeed',
  'evalBatchSize',
  'probeExamples',
  'probeSeed',
  'probeEvery',
]);

/** The flag that sets a `PretrainOptions` field named in an error (`modelSize.hidden` → `--hidden`). */
export function pretrainFlagOf(argument: string): string | undefined {
  if (argument.startsWith('taskOptions.')) {
    return `--task-option ${argument.slice('taskOptions.'.length)}`;
  }
  return PRETRAIN_FLAGS.find((f) => f.field === argument)?.flag;
}

/**
 * The `lethe pretrain …` command that recreates a task model with `settings` on `backend`:
 * every setting spelt out, task options as `--task-option key=value` in key order, words
 * quoted for POSIX shells where needed.
 */
export function pretrainCommand(settings: PretrainSettings, backend: string): string {
  const words = ['lethe', 'pretrain', '--task', settings.task];
  for (const key of Object.keys(settings.taskOptions).sort()) {
    words.push('--task-option', formatTaskOptionFlag(key, settings.taskOptions[key]!));
  }
  const size = settings.modelSize;
  words.push(
    '--hidden',
    String(size.hidden),
    '--layers',
    String(size.layers),
    '--heads',
    String(size.heads),
    '--kv-heads',
    String(size.kvHeads),
    '--intermediate',
    String(size.intermediate),
  );
  if (settings.init !== undefined) words.push('--init', settings.init);
  words.push(
    '--steps',
    String(settings.steps),
    '--batch-size',
    String(settings.batchSize),
    ...(settings.microBatchSize === undefined
      ? []
      : ['--micro-batch-size', String(settings.microBatchSize)]),
    '--seed',
    String(settings.seed),
    '--lr',
    String(settings.lr),
    '--warmup',
    String(settings.warmupSteps),
    '--min-lr-ratio',
    String(settings.minLrRatio),
    '--weight-decay',
    String(settings.weightDecay),
    '--clip-norm',
    String(settings.clipNorm),
  );
  if (settings.window !== undefined) words.push('--window', String(settings.window));
  if (settings.bucketSteps !== undefined) {
    words.push('--bucket-steps', String(settings.bucketSteps));
  }
  if (settings.lossOn === 'all') words.push('--loss-on', 'all');
  words.push(
    '--eval-examples',
    String(settings.evalExamples),
    '--eval-seed',
    String(settings.evalSeed),
    '--eval-batch-size',
    String(settings.evalBatchSize),
  );
  if (settings.probeExamples > 0) {
    words.push(
      '--probe-examples',
      String(settings.probeExamples),
      '--probe-seed',
      String(settings.probeSeed),
      '--probe-every',
      String(settings.probeEvery),
    );
  }
  words.push('--out', settings.out, '--backend', backend);
  return words.map(shellQuote).join(' ');
}

/** What {@link parsePretrainFlags} reads: the options of `pretrainTaskModel` and the backend. */
export interface ParsedPretrainFlags {
  readonly options: PretrainOptions;
  /** `--backend`, when given. */
  readonly backend: BackendName | undefined;
}

/**
 * Reads `lethe pretrain` flags (`--flag value` pairs, as a shell splits a
 * {@link pretrainCommand} after `lethe pretrain`). Values are checked later by
 * `resolvePretrainSettings`; here only their syntax.
 *
 * @throws LetheError `E_ARG` naming the flag for an unknown, repeated (all but
 *   `--task-option`), valueless or malformed flag, or a missing `--task`.
 */
export function parsePretrainFlags(args: readonly string[]): ParsedPretrainFlags {
  const byFlag = new Map(PRETRAIN_FLAGS.map((f) => [f.flag, f]));
  const values = new Map<string, string>();
  const taskOptions: Record<string, JsonValue> = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i]!;
    const spec = byFlag.get(name);
    if (spec === undefined) {
      throw new LetheError(
        'E_ARG',
        `unknown flag; valid flags: ${[...byFlag.keys()].join(', ')}`,
        name,
      );
    }
    const value = args[i + 1];
    if (value === undefined) throw new LetheError('E_ARG', 'needs a value', name);
    if (spec.repeatable) {
      const [key, option] = parseTaskOptionFlag(value);
      if (Object.hasOwn(taskOptions, key)) {
        throw new LetheError('E_ARG', `sets option ${key} twice`, name);
      }
      taskOptions[key] = option;
      continue;
    }
    if (values.has(name)) throw new LetheError('E_ARG', 'given twice', name);
    values.set(name, value);
  }
  const task = values.get('--task');
  if (task === undefined) throw new LetheError('E_ARG', 'is required', '--task');
  const options: Record<string, unknown> = { task, taskOptions };
  const modelSize: Partial<Record<keyof ModelSize, number>> = {};
  for (const spec of PRETRAIN_FLAGS) {
    const text = values.get(spec.flag);
    if (text === undefined || spec.field === 'task' || spec.field === 'backend') continue;
    if (spec.field.startsWith('modelSize.')) {
      modelSize[spec.field.slice('modelSize.'.length) as keyof ModelSize] = parseNumberFlag(
        text,
        spec.flag,
      );
    } else if (NUMBER_FIELDS.has(spec.field)) {
      options[spec.field] = parseNumberFlag(text, spec.flag);
    } else {
      options[spec.field] = text;
    }
  }
  options.modelSize = modelSize;
  options.out ??= `models/${task}`;
  return {
    options: options as unknown as PretrainOptions,
    backend: values.get('--backend') as BackendName | undefined,
  };
}
