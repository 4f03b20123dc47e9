import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '@lethe/tensor';
import { expectLetheError, shellWords } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateFullCache } from '../src/held-out-evaluation';
import { loadTaskModel } from '../src/load-task-model';
import { parseTaskModelManifest, type TaskModelProbe } from '../src/manifest';
import { parsePretrainFlags, pretrainCommand } from '../src/pretrain-flags';
import { type PretrainOptions, resolvePretrainSettings } from '../src/pretrain-settings';
import { pretrainTaskModel } from '../src/pretrain-task-model';
import { TRAINING_RECORD_FILE } from '../src/training-record';
import { MICRO } from './helpers';

let dir: string;

beforeAll(async () => {
  await initBackend('wasm');
  dir = await mkdtemp(join(tmpdir(), 'lethe-probes-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const RETRIEVAL = {
  task: 'retrieval',
  taskOptions: { variant: 'niah-single', contextChars: 96 },
  modelSize: MICRO,
  steps: 5,
  batchSize: 2,
  evalExamples: 2,
} as const;

describe('validation probes while pretraining', () => {
  it('settings: defaults, and refusals naming the setting', () => {
    const base = { task: 'arithmetic', out: join(dir, 'x'), steps: 40 };
    const { settings } = resolvePretrainSettings({ ...base, probeExamples: 4 });
    expect([settings.probeExamples, settings.probeSeed, settings.probeEvery]).toEqual([4, 1, 40]);
    const none = resolvePretrainSettings(base).settings;
    expect([none.probeExamples, none.probeEvery]).toEqual([0, undefined]);
    const refused = (options: Partial<PretrainOptions>, argument: string, message: RegExp) =>
      expect(
        expectLetheError(() => resolvePretrainSettings({ ...base, ...options }), 'E_ARG', argument)
          .message,
      ).toMatch(message);
    refused({ probeEvery: 5 }, 'probeEvery', /needs probeExamples > 0/);
    refused({ probeExamples: 4, probeSeed: 0 }, 'probeSeed', /differ from evalSeed 0, got 0/);
    refused({ probeExamples: 4, probeSeed: 1_000_000 }, 'probeSeed', /training seeds/);
    refused({ probeExamples: 4, probeEvery: 0 }, 'probeEvery', /integer/);
    refused({ probeExamples: -1 }, 'probeExamples', /integer/);
  });

  it('scores the validation examples every probeEvery updates and after the last, across a resume, with the weights of a run without probes', async () => {
    const plainLosses: number[] = [];
    const plain = await pretrainTaskModel({
      ...RETRIEVAL,
      out: join(dir, 'plain'),
      onProgress: (p) => plainLosses.push(p.loss),
    });
    plain.model.dispose();
    const mean = plainLosses.reduce((a, b) => a + b, 0) / plainLosses.length;
    expect(plainLosses).toHaveLength(5);
    expect(plain.manifest!.training.lossCurve!.every).toBe(50);
    expect(plain.manifest!.training.lossCurve!.means).toHaveLength(1);
    expect(plain.manifest!.training.lossCurve!.means[0]).toBeCloseTo(mean, 4);

    const options = {
      ...RETRIEVAL,
      probeExamples: 3,
      probeEvery: 2,
      out: join(dir, 'probed'),
      checkpointDir: join(dir, 'probed.state'),
      checkpointEvery: 2,
    };
    const seen: TaskModelProbe[] = [];
    const controller = new AbortController();
    const first = await pretrainTaskModel({
      ...options,
      signal: controller.signal,
      onProbe: (probe) => seen.push(probe),
      onProgress: (p) => {
        if (p.step === 3) controller.abort();
      },
    });
    first.model.dispose();
    expect([first.stopped, seen.map((p) => p.step)]).toEqual([true, [2]]);
    const kept = JSON.parse(
      await readFile(join(options.checkpointDir, TRAINING_RECORD_FILE), 'utf8'),
    );
    expect(kept.probes.map((p: TaskModelProbe) => p.step)).toEqual([2]);
    expect(kept.trainingSeconds).toBeGreaterThan(0);
    // The state keeps each update's loss: the stopped run's three, the plain run's own.
    expect(kept.losses).toHaveLength(3);
    kept.losses.forEach((loss: number, i: number) => expect(loss).toBeCloseTo(plainLosses[i]!, 5));

    const second = await pretrainTaskModel({ ...options, onProbe: (probe) => seen.push(probe) });
    second.model.dispose();
    expect(seen.map((p) => p.step)).toEqual([2, 4, 5]);
    const training = second.manifest!.training;
    expect(training.probes).toEqual({ seed: 1, examples: 3, every: 2, scores: seen });
    for (const probe of seen) {
      expect([probe.metric, probe.n]).toEqual(['accuracy', 3]);
      expect(probe.mean * 3).toBeCloseTo(Math.round(probe.mean * 3), 9);
    }
    expect(training.trainingSeconds).toBeGreaterThanOrEqual(kept.trainingSeconds);
    // Across the stop and the resume, the loss curve is the uninterrupted run's.
    expect(training.lossCurve).toEqual(plain.manifest!.training.lossCurve);

    // The validation prompts were never training prompts here, so the weights are a plain run's.
    expect(await readFile(join(options.out, 'model.safetensors'))).toEqual(
      await readFile(join(dir, 'plain', 'model.safetensors')),
    );
    // The probe after the last update is the saved model's score on the validation examples.
    const loaded = await loadTaskModel(options.out);
    const rescored = await evaluateFullCache({
      task: 'retrieval',
      taskOptions: RETRIEVAL.taskOptions,
      model: loaded.model,
      checkpoint: options.out,
      seed: 1,
      examples: 3,
      batchSize: 16,
    });
    expect([rescored.mean, rescored.stderr]).toEqual([seen[2]!.mean, seen[2]!.stderr]);

    // The recorded command recreates the settings, probes included; the file reads back.
    const parsed = parsePretrainFlags(shellWords(second.manifest!.command).slice(2));
    expect(resolvePretrainSettings(parsed.options).settings).toEqual(second.settings);
    expect(second.manifest!.command).toContain('--probe-examples 3 --probe-seed 1 --probe-every 2');
    expect(loaded.manifest.training.probes).toEqual(training.probes);
    loaded.model.dispose();
  });

  it('a run with probes does not resume the state of a run without them', async () => {
    const state = join(dir, 'mixed.state');
    const controller = new AbortController();
    const first = await pretrainTaskModel({
      ...RETRIEVAL,
      out: join(dir, 'mixed'),
      checkpointDir: state,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    first.model.dispose();
    const error = await pretrainTaskModel({
      ...RETRIEVAL,
      probeExamples: 2,
      out: join(dir, 'mixed'),
      checkpointDir: state,
    }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error?.code).toBe('E_ARG');
    expect(error?.message).toMatch(/setting "probe" was undefined, now \{"examples":2,"seed":1\}/);
  });

  it('--loss-on all: recorded, spelt out in the command, refused for lm and for other values', () => {
    const base = { task: 'arithmetic', out: join(dir, 'x') };
    const { settings } = resolvePretrainSettings({ ...base, lossOn: 'all' });
    expect(settings.lossOn).toBe('all');
    expect(resolvePretrainSettings(base).settings.lossOn).toBe('completion');
    const words = ['--task', 'arithmetic', '--loss-on', 'all', '--out', base.out];
    expect(resolvePretrainSettings(parsePretrainFlags(words).options).settings).toEqual(settings);
    expect(pretrainCommand(settings, 'wasm')).toContain(' --bucket-steps 8 --loss-on all ');
    expect(pretrainCommand(resolvePretrainSettings(base).settings, 'wasm')).not.toContain(
      '--loss-on',
    );
    expectLetheError(
      () => resolvePretrainSettings({ task: 'lm', out: base.out, lossOn: 'all' }),
      'E_ARG',
      'lossOn',
    );
    expectLetheError(
      () => resolvePretrainSettings({ ...base, lossOn: 'prompt' as never }),
      'E_ARG',
      'lossOn',
    );
  });

  it('a manifest with malformed probes is refused, naming the field', () => {
    const manifest = (probes: unknown) => ({
      format: 'lethe-task-model',
      version: 1,
      task: { name: 'arithmetic', options: {}, resolved: {} },
      model: { ...MICRO, vocabSize: 20, parameters: 100 },
      training: {
        seed: 1,
        trainingSeed: 1_000_001,
        steps: 4,
        batchSize: 2,
        lr: 0.005,
        warmupSteps: 0,
        minLrRatio: 0.05,
        weightDecay: 0.01,
        clipNorm: 1,
        backend: 'wasm',
        finalLoss: 1,
        trainingSeconds: 2,
        probes,
      },
      command: 'lethe pretrain --task arithmetic',
      evaluation: null,
    });
    const score = { step: 2, metric: 'accuracy', mean: 0.5, stderr: 0.1, n: 2 };
    expect(
      parseTaskModelManifest(manifest({ seed: 1, examples: 2, every: 2, scores: [score] }), 'm')
        .training.probes?.scores,
    ).toEqual([score]);
    const refused = (probes: unknown, field: RegExp) =>
      expect(
        expectLetheError(() => parseTaskModelManifest(manifest(probes), 'm'), 'E_FORMAT', 'm')
          .message,
      ).toMatch(field);
    refused({ seed: 1, examples: 2, every: 2 }, /training\.probes\.scores" must be an array/);
    const curve = (lossCurve: unknown) => ({
      ...manifest(undefined),
      training: { ...manifest(undefined).training, lossCurve },
    });
    expect(
      parseTaskModelManifest(curve({ every: 3, means: [2.5, 1.5] }), 'm').training.lossCurve,
    ).toEqual({ every: 3, means: [2.5, 1.5] });
    const refusedCurve = (lossCurve: unknown, field: RegExp) =>
      expect(
        expectLetheError(() => parseTaskModelManifest(curve(lossCurve), 'm'), 'E_FORMAT', 'm')
          .message,
      ).toMatch(field);
    refusedCurve({ every: 3, means: [2.5] }, /lossCurve\.means" must hold one mean per window/);
    refusedCurve({ every: 0, means: [] }, /lossCurve\.every/);
    refusedCurve({ every: 3, means: [2.5, 'x'] }, /lossCurve\.means\[1\]/);
    refused(
      { seed: 1, examples: 2, every: 2, scores: [score, score] },
      /training\.probes\.scores\[1\]\.step" must increase/,
    );
    refused(
      { seed: 1, examples: 2, every: 2, scores: [{ ...score, metric: 'bleu' }] },
      /scores\[0\]\.metric" must be "accuracy" or "perplexity"/,
    );
    refused(
      {
        seed: 1,
        examples: 2,
        every: 2,
        scores: [{ ...score, members: { a: { correct: 3, total: 2 } } }],
      },
      /scores\[0\]\.members\.a\.correct" must be ≤ total/,
    );
  });
});
