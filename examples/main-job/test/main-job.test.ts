import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkpointOf,
  knownPolicies,
  policyParts,
  prefillChunkOf,
  rateEveryOf,
  SUITE_RETRIEVAL_MEMBERS,
  type SuiteOptionsInput,
  suiteTask,
  TASK_NAMES,
  taskLabel,
  validateSweepConfig,
} from '@lethe/eval';
import { modelIdentity } from '@lethe/model';
import { createDefaultRegistry } from '@lethe/policies';
import { evaluateFullCache, loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const registry = createDefaultRegistry();
const sweep = validateSweepConfig(JSON.parse(readFileSync(join(root, 'sweep.json'), 'utf8')), {
  ...knownPolicies(registry),
  tasks: TASK_NAMES,
});

beforeAll(async () => {
  await initBackend('wasm');
});

/**
 * Registered policies the main job leaves out: SOL's baselines other than the fixed schedule, to
 * stay within its 5 minutes (`examples/sol-lm` compares SOL with all of them).
 */
const STUDY_ONLY = ['sol-random', 'sol-random-steered', 'sol-emc', 'sol-dac'];
const singles = sweep.policies.filter((p) => p.compose === undefined);
const parts = sweep.policies.flatMap((p) => policyParts(p));

describe('the main job sweep', () => {
  it('evaluates every registered policy but the study-only ones', () => {
    const names = singles.map((p) => p.name);
    const expected = registry.names().filter((name) => !STUDY_ONLY.includes(name));
    expect([...new Set(names)].sort()).toEqual(expected.sort());
    for (const name of STUDY_ONLY) expect(registry.has(name)).toBe(true);
  });

  it('composes an eviction policy with a compute policy, heuristic and learned', () => {
    const composed = sweep.policies.filter((p) => p.compose !== undefined).map((p) => p.label);
    expect(composed).toEqual(['h2o+sol-fixed', 'gsa+sol']);
  });

  it('runs each learned policy from a committed policy directory of its provider', () => {
    for (const policy of parts.filter((p) => registry.provider(p.name).learned)) {
      const manifest = JSON.parse(
        readFileSync(resolve(root, policy.dir!, 'policy.json'), 'utf8'),
      ) as { provider: string };
      expect(manifest.provider).toBe(policy.name);
    }
  });

  it("runs each learned policy on the model it was trained on (each pretrained task model's)", async () => {
    for (const entry of sweep.policies) {
      for (const part of policyParts(entry).filter((p) => registry.provider(p.name).learned)) {
        const { baseModel } = JSON.parse(
          readFileSync(resolve(root, part.dir!, 'policy.json'), 'utf8'),
        ) as { baseModel: string };
        for (const label of entry.tasks ?? sweep.tasks.map(taskLabel)) {
          const dir = resolve(root, checkpointOf(sweep, label)!);
          if (!existsSync(join(dir, 'lethe-model.json'))) continue; // Countdown's RL run, not a task model
          const { model } = await loadTaskModel(dir);
          try {
            expect(baseModel, `${part.name} on ${label}`).toBe(await modelIdentity(model));
          } finally {
            model.dispose();
          }
        }
      }
    }
  });

  it.each([
    [
      'countdown-ngc-schedule',
      '../../models/countdown-ngc',
      ['countdown', 'countdown-ngc-schedule'],
      ['full', 'ngc', 'snapkv-w5'],
    ],
    [
      'countdown-verbose',
      '../ngc-countdown/results/runs/suite-ngc-b24-g16',
      ['countdown-verbose'],
      ['full', 'h2o', 'keydiff', 'ngc', 'snapkv-w5'],
    ],
  ])(
    'runs NGC on the rate schedule it was trained with (%s), beside the heuristics there',
    (label, dir, tasks, onSchedule) => {
      const run = JSON.parse(readFileSync(resolve(root, dir, 'lethe-ngc.json'), 'utf8')) as {
        settings: { cadence: number; retention: number[] };
      };
      // Its rounds: the prompt whole, then one every `cadence` tokens.
      expect(rateEveryOf(sweep, label)).toBe(run.settings.cadence);
      expect(prefillChunkOf(sweep, label)).toBeNull();
      // There, rates of its training: ε = 1 − retentions of its curriculum.
      const schedule = sweep.tasks.find((task) => taskLabel(task) === label)!;
      for (const budget of schedule.budgets!) expect(run.settings.retention).toContain(budget);
      const ngc = singles.find(
        (p) => p.name === 'ngc' && resolve(root, p.dir!) === resolve(root, dir),
      )!;
      expect(ngc.tasks).toEqual(tasks);
      const here = singles
        .filter((p) => p.tasks == null || p.tasks.includes(label))
        .map((p) => p.label);
      expect(here.sort()).toEqual(onSchedule);
    },
  );

  it("runs NGC at the common ceilings too, where its model is the task's", () => {
    const ceilings = sweep.tasks.filter((task) => rateEveryOf(sweep, taskLabel(task)) === null);
    const ngcTasks = singles.filter((p) => p.name === 'ngc').flatMap((p) => p.tasks ?? []);
    expect(ceilings.map(taskLabel).filter((label) => ngcTasks.includes(label))).toEqual([
      'countdown',
    ]);
  });

  it('has tight budgets and a shipped model for every task', () => {
    expect(Math.min(...sweep.budgets)).toBeLessThanOrEqual(0.25);
    for (const task of sweep.tasks) expect(checkpointOf(sweep, taskLabel(task))).toBeDefined();
  });
});

/** Tasks whose model is a task model of `lethe pretrain` (the others are RL runs, see below). */
const pretrained = sweep.tasks.filter((task) =>
  existsSync(resolve(root, checkpointOf(sweep, taskLabel(task))!, 'lethe-model.json')),
);

describe('the RL-trained models', () => {
  // Their full-cache scores are re-evaluated per problem by examples/ngc-countdown's
  // committed-models test; here: they are NGC runs of the task and options the sweep evaluates.
  it.each(sweep.tasks.filter((task) => !pretrained.includes(task)).map((t) => [t.name, t]))(
    '%s was trained on the options the sweep evaluates',
    (name, task) => {
      const run = JSON.parse(
        readFileSync(
          resolve(root, checkpointOf(sweep, taskLabel(task))!, 'lethe-ngc.json'),
          'utf8',
        ),
      ) as { task: { name: string }; baseModel: { task: { options: unknown } } };
      expect(run.task.name).toBe(name);
      expect(run.baseModel.task.options).toEqual(task.options);
    },
  );
});

describe.each(pretrained.map((task) => [taskLabel(task), task] as const))(
  'the shipped %s model',
  (label, task) => {
    it('was trained on the options the sweep evaluates', async () => {
      const loaded = await loadTaskModel(resolve(root, checkpointOf(sweep, label)!));
      loaded.model.dispose();
      expect(loaded.manifest.task.name).toBe(task.name);
      if (task.name !== 'suite') {
        expect(loaded.manifest.task.options).toEqual(task.options);
        return;
      }
      // The suite's retrieval line: every retrieval member in turn, at every context length
      // from its shortest to its longest, the member and length evaluated among them.
      const trained = suiteTask(loaded.manifest.task.resolved as SuiteOptionsInput).options;
      const { member, contextChars } = task.options as { member: string; contextChars: number };
      expect(trained.member).toBe('retrieval-mixture');
      expect(SUITE_RETRIEVAL_MEMBERS).toContain(member);
      expect(trained.minContextChars).toBeLessThanOrEqual(contextChars);
      expect(trained.contextChars).toBeGreaterThanOrEqual(contextChars);
    });
  },
);

/** Every committed task model (`lethe pretrain` output), in the sweep or the base of one. */
const models = join(root, '../../models');
const taskModels = readdirSync(models).filter((d) =>
  existsSync(join(models, d, 'lethe-model.json')),
);

describe.each(taskModels)('the committed task model %s', (model) => {
  it('reproduces the full-cache score recorded in its manifest', async () => {
    const dir = join(models, model);
    const loaded = await loadTaskModel(dir);
    const recorded = loaded.manifest.evaluation;
    expect(recorded).not.toBeNull();
    const score = await evaluateFullCache({
      task: loaded.manifest.task.name,
      taskOptions: loaded.manifest.task.options,
      model: loaded.model,
      checkpoint: dir,
      seed: recorded!.seed,
      examples: recorded!.examples,
      batchSize: recorded!.batchSize,
    });
    loaded.model.dispose();
    expect(score.metric).toBe(recorded!.metric);
    expect(score.mean).toBeCloseTo(recorded!.mean, 6);
    expect(score.n).toBe(recorded!.n);
  }, 300_000); // retrieval-long: 64 prompts of ~1,100 tokens, about 70 s alone and 190 s beside other test tasks
});
