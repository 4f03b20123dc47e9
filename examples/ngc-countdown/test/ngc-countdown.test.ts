import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeText, type GenerationTask, type JsonValue } from '@lethe/eval';
import { runSweep } from '@lethe/eval/node';
import { type CharTokenizer, modelIdentity } from '@lethe/model';
import { readModelDirectory, readPolicyDirectory } from '@lethe/model/node';
import { NgcPolicy, ngcPolicyContents, withEvictionRateTag } from '@lethe/policies-ngc';
import { interoceptionTokenizer, TagMarkupTokenizer } from '@lethe/policies-ngc/train';
import { loadTaskModel } from '@lethe/task-models/node';
import { initBackend } from '@lethe/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countdownNgcTask } from '../src/countdown-ngc-task';
import { cellsOfSweeps, readEvalCells } from '../src/eval-cells';
import { BASELINE_HEURISTICS, evaluationSweeps } from '../src/eval-sweeps';
import { evaluateMethod } from '../src/evaluate-method';
import { ngcReport } from '../src/report-content';
import { NGC_RUN_FILE } from '../src/run-file';
import { runTokenizer } from '../src/run-tokenizer';
import { summarize } from '../src/summarize';
import { trainRun } from '../src/train-run';
import { DEFAULT_TRAIN_SETTINGS, type TrainSettings } from '../src/train-settings';

const MODEL = fileURLToPath(new URL('../../../models/countdown', import.meta.url));
let root: string;

beforeAll(async () => {
  await initBackend('wasm');
  root = await mkdtemp(join(tmpdir(), 'lethe-ngc-countdown-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('Countdown as an NGC task', () => {
  it('rewards the reference solution, not a wrong one, on training examples only', async () => {
    const { task, model } = await loadTaskModel(MODEL);
    model.dispose();
    const generation = task as GenerationTask;
    const ngcTask = countdownNgcTask(generation, 0, 8);
    const example = ngcTask.example(2, 3);
    // Step 2, slot 3 is training example 2 · 8 + 3 = 19 of the training seed.
    expect(example.index).toBe(19);
    expect(example.seed).toBeGreaterThanOrEqual(1_000_000);
    expect(ngcTask.prompt(example, 0.5)).toEqual(encodeText(generation.tokenizer, example.prompt));
    const right = generation.tokenizer.encode(example.target);
    expect(ngcTask.reward(example, right)).toBe(1);
    expect(ngcTask.reward(example, generation.tokenizer.encode('1+1.'))).toBe(0);
  });

  it('with interoception, tags every prompt with its rate over an extended vocabulary', async () => {
    const { task, model } = await loadTaskModel(MODEL);
    model.dispose();
    const generation = task as GenerationTask;
    const tokenizer = interoceptionTokenizer(generation.tokenizer as CharTokenizer);
    // Old ids keep their meaning; the tag's missing characters come after them.
    expect(tokenizer.alphabet.slice(0, generation.tokenizer.vocabSize - 4)).toEqual(
      (generation.tokenizer as CharTokenizer).alphabet,
    );
    const ngcTask = countdownNgcTask(generation, 0, 8, tokenizer);
    const example = ngcTask.example(0, 0);
    const text = tokenizer.decode(ngcTask.prompt(example, 0.5), { skipSpecialTokens: true });
    expect(text).toBe(`${example.prompt}<eviction_rate>50%</eviction_rate>`);
    expect(ngcTask.reward(example, tokenizer.encode(example.target))).toBe(1);
  });

  it('tags training prompts with the markup tokens', async () => {
    const { task, model } = await loadTaskModel(MODEL);
    model.dispose();
    const markup = interoceptionTokenizer(task.tokenizer as CharTokenizer, 'markup');
    expect(markup).toBeInstanceOf(TagMarkupTokenizer);
    const ngcTask = countdownNgcTask(task as GenerationTask, 0, 8, markup);
    const example = ngcTask.example(0, 0);
    const ids = ngcTask.prompt(example, 0.25);
    expect(markup.decode(ids, { skipSpecialTokens: true })).toBe(
      `${example.prompt}<eviction_rate>25%</eviction_rate>`,
    );
  });
});

describe('train → evaluate → report', () => {
  it('trains two steps, writes the model with its history and policy, evaluates it through the harness and reports it', async () => {
    const out = join(root, 'ngc');
    const settings: TrainSettings = {
      ...DEFAULT_TRAIN_SETTINGS,
      model: MODEL,
      variant: 'ngc',
      steps: 2,
      promptsPerStep: 2,
      groupSize: 2,
      retention: [0.5],
      maxNewTokens: 40,
      checkpointEvery: 1,
    };
    const result = await trainRun(settings, { out, command: 'test' });
    expect(result.step).toBe(2);
    expect((await readdir(`${out}.state`)).sort()).toEqual(['ngc-checkpoint.safetensors']);
    const run = JSON.parse(await readFile(join(out, NGC_RUN_FILE), 'utf8'));
    expect(run.settings).toEqual(settings);
    expect(run.history).toHaveLength(2);
    expect(run.history[1].evictionRate).toBe(0.5);

    // The trained run carries the policy manifest through which the harness evaluates it, its
    // base model the run's own weights.
    const trained = await readModelDirectory(out);
    const identity = await modelIdentity(trained.model);
    trained.model.dispose();
    const { blockSize, window, logits } = settings;
    const policy = await readPolicyDirectory(out);
    expect(policy.manifest).toEqual(
      ngcPolicyContents({ options: { blockSize, window, logits }, baseModel: identity }).manifest,
    );
    const base = await loadTaskModel(MODEL);
    base.model.dispose();
    const task = base.task as GenerationTask;
    const sweeps = evaluationSweeps({
      task: { name: task.name, options: task.options as Record<string, JsonValue> },
      baseline: MODEL,
      base: MODEL,
      runs: [['ngc', out]],
      heuristicsOn: ['no-evict'],
      rates: [0.5],
      cadence: DEFAULT_TRAIN_SETTINGS.cadence,
      examples: 4,
      evalSeed: 0,
      batchSize: 4,
    });
    const evalDir = join(root, 'eval');
    for (const { model, config } of sweeps) {
      await runSweep(config, { resultsPath: join(evalDir, `${model}.json`) });
    }
    const results = await readEvalCells(evalDir);
    expect(results.settings).toEqual({ examples: 4, evalSeed: 0, cadence: 16, window: 5 });
    const full = results.cells.find((c) => c.model === 'no-evict' && c.method === 'full')!;
    for (const cell of results.cells.filter((c) => c.rate > 0)) {
      // Every method evicts half of the cache each round: its peak is below the full cache's.
      expect(summarize(cell.outcomes, full.outcomes).meanPeak).toBeLessThan(
        summarize(full.outcomes, full.outcomes).meanPeak,
      );
    }
    expect(results.cells.map((c) => `${c.model}/${c.method}/${c.rate}`)).toEqual([
      'no-evict/full/0',
      ...BASELINE_HEURISTICS.map((h) => `no-evict/${h}/0.5`),
      'ngc/ngc/0.5',
      'sft/full/0',
    ]);
    const runs = [{ label: 'ngc', settings: run.settings, history: run.history }];
    const report = ngcReport(results, runs, 0.5);
    expect(report.markdown).toContain('| ngc | ngc |');
    expect(report.markdown).toContain('| ngc | ngc | 2 | 2 | log τ = 0.5 | 2 × 2 | 2 |');
    expect(report.markdown).toContain('| no-evict | snapkv |');
    expect(Object.keys(report.figures).sort()).toEqual([
      'accuracy-vs-peak.svg',
      'training-eviction-rate.svg',
      'training-grad-norm.svg',
      'training-reward.svg',
    ]);
    for (const svg of Object.values(report.figures)) expect(svg.startsWith('<svg')).toBe(true);
    expect(() => ngcReport(results, runs, 0.5, ['ngc', 'nope'])).toThrow(
      /curveLabels.*nope|nope.*curveLabels/,
    );

    // A rerun of the finished run writes it again, policy manifest included.
    expect((await trainRun(settings, { out, command: 'test' })).resumedFrom).toBe(2);
    expect((await readPolicyDirectory(out)).manifest).toEqual(policy.manifest);
  }, 180_000);

  it.each(['characters', 'markup'] as const)(
    'evaluates a run trained with interoception (%s tag) as a direct loop over tagged prompts does',
    async (tagTokens) => {
      const out = join(root, `intero-${tagTokens}`);
      const settings: TrainSettings = {
        ...DEFAULT_TRAIN_SETTINGS,
        model: MODEL,
        variant: 'ngc',
        steps: 1,
        promptsPerStep: 2,
        groupSize: 2,
        retention: [0.5],
        maxNewTokens: 40,
        checkpointEvery: 1,
        interoception: true,
        tagTokens,
      };
      await trainRun(settings, { out, command: 'test' });
      const manifest = JSON.parse(await readFile(join(out, 'policy.json'), 'utf8'));
      expect(manifest.options.interoception).toBe(tagTokens);

      const base = await loadTaskModel(MODEL);
      base.model.dispose();
      const task = base.task as GenerationTask;
      const [sweep] = evaluationSweeps({
        task: { name: task.name, options: task.options as Record<string, JsonValue> },
        baseline: MODEL,
        base: MODEL,
        runs: [['intero', out]],
        heuristicsOn: [],
        rates: [0.5],
        cadence: DEFAULT_TRAIN_SETTINGS.cadence,
        examples: 4,
        evalSeed: 0,
        batchSize: 4,
      });
      const { cells } = cellsOfSweeps([
        { model: 'no-evict', results: await runSweep(sweep!.config) },
      ]);
      const harness = cells.find((c) => c.method === 'ngc')!;

      // The loop the evaluation ran before the harness: the run's tokenizer, tagged prompts.
      const trained = await readModelDirectory(out);
      const { blockSize, window, logits, cadence } = DEFAULT_TRAIN_SETTINGS;
      const direct = await evaluateMethod({
        model: trained.model,
        tokenizer: runTokenizer(trained.tokenizer as CharTokenizer, settings),
        promptText: (example) => withEvictionRateTag(example.prompt, 0.5),
        task,
        examples: Array.from({ length: 4 }, (_, i) => task.example(0, i)),
        batchSize: 4,
        policy: () =>
          new NgcPolicy({ evictionRate: 0.5, cadence, blockSize, window, logits, mode: 'greedy' }),
      });
      trained.model.dispose();
      expect(harness.outcomes).toEqual(direct);
    },
    120_000,
  );
});
