import { CMAES } from '@lethe/es-cmaes';
import { expectLetheError } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';
import { decodeNammCheckpoint, encodeNammCheckpoint } from '../../src/train/namm-checkpoint';
import { NammEvolution } from '../../src/train/namm-evolution';
import { DEFAULT_NAMM_SIGMA0, resolveOptions } from '../../src/train/namm-evolution-options';
import { fakeOptions, fakeTask } from './fake-evaluation';

const task = fakeTask(
  'a',
  (id) => id + 1,
  (m, id) => m + id,
);
const options = (overrides = {}) => fakeOptions([task], overrides);

/** A checkpoint after one generation of `options()`. */
async function checkpointAfterOne() {
  const evolution = new NammEvolution(options());
  await evolution.step();
  return evolution.checkpoint();
}

describe('NammEvolution options', () => {
  it('defaults: BAM hidden 32 over the spectrogram features, λ = 32, σ0 = 0.065', () => {
    const settings = resolveOptions({
      ...options(),
      scorer: undefined,
      features: undefined,
      population: undefined,
      sigma0: undefined,
      normalization: undefined,
    });
    expect(settings).toMatchObject({
      scorer: { kind: 'bam', features: 25, hidden: 32 },
      features: 'spectrogram',
      population: 32,
      covariance: 'full',
      sigma0: 0.065,
      seed: 7,
      updateInterval: 64,
      threshold: 0,
      equalHeads: false,
      capacity: null,
    });
    expect(DEFAULT_NAMM_SIGMA0).toBe(0.065);
  });

  it('runs CMA-ES with elite ratio 0.5 (μ = λ/2) and c_m = 1', () => {
    const evolution = new NammEvolution(options({ population: 32 }));
    const { parameters } = CMAES.fromState(evolution.checkpoint().es);
    expect(parameters).toMatchObject({ lambda: 32, mu: 16, cm: 1, active: true, diagonal: false });
  });

  it('runs separable CMA-ES with covariance: diagonal, and refuses another model', () => {
    const evolution = new NammEvolution(options({ covariance: 'diagonal' }));
    expect(CMAES.fromState(evolution.checkpoint().es).parameters).toMatchObject({ diagonal: true });
    expectLetheError(
      () => new NammEvolution(options({ covariance: 'sparse' as 'full' })),
      'E_ARG',
      'covariance',
    );
  });

  it('refuses a population below 2 and σ0 ≤ 0, naming them', () => {
    for (const population of [1, 0, 2.5]) {
      expectLetheError(() => new NammEvolution(options({ population })), 'E_ARG', 'population');
    }
    for (const sigma0 of [0, -0.1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectLetheError(() => new NammEvolution(options({ sigma0 })), 'E_ARG', 'sigma0');
    }
    expectLetheError(() => new NammEvolution(options({ seed: -1 })), 'E_ARG', 'seed');
    expectLetheError(
      () => new NammEvolution(options({ promptsPerTask: 0 })),
      'E_ARG',
      'promptsPerTask',
    );
  });

  it('refuses an initial genome of the wrong length or with NaN', () => {
    expectLetheError(
      () => new NammEvolution(options({ initialGenome: new Float64Array(80) })),
      'E_ARG',
      'initialGenome',
    );
    const nan = new Float64Array(81);
    nan[5] = Number.NaN;
    const error = expectLetheError(
      () => new NammEvolution(options({ initialGenome: nan })),
      'E_ARG',
      'initialGenome',
    );
    expect(error.message).toContain('value 5');
  });

  it('refuses unknown, repeated or missing stage tasks and repeated task names', () => {
    expectLetheError(
      () => new NammEvolution(options({ stages: [{ tasks: ['b'], generations: 1 }] })),
      'E_ARG',
      'stages[0].tasks[0]',
    );
    expectLetheError(
      () =>
        new NammEvolution(
          options({
            stages: [
              { tasks: ['a'], generations: 1 },
              { tasks: ['a'], generations: 1 },
            ],
          }),
        ),
      'E_ARG',
      'stages[1].tasks[0]',
    );
    expectLetheError(
      () => new NammEvolution(options({ stages: [{ tasks: [], generations: 1 }] })),
      'E_ARG',
      'stages[0].tasks',
    );
    expectLetheError(
      () => new NammEvolution(options({ stages: [{ tasks: ['a'], generations: 0 }] })),
      'E_ARG',
      'stages[0].generations',
    );
    expectLetheError(() => new NammEvolution(options({ stages: [] })), 'E_ARG', 'stages');
    expectLetheError(() => new NammEvolution(fakeOptions([task, task])), 'E_ARG', 'tasks[1].name');
  });

  it('refuses a scorer whose input is not the features’ width, and bad NAMM settings', () => {
    expectLetheError(
      () => new NammEvolution(options({ features: 'spectrogram' })),
      'E_ARG',
      'scorer.features',
    );
    expectLetheError(
      () => new NammEvolution(options({ scorer: { kind: 'mlp', features: 8, depth: 0 } })),
      'E_ARG',
      'scorer.depth',
    );
    expectLetheError(
      () => new NammEvolution(options({ updateInterval: 0 })),
      'E_ARG',
      'updateInterval',
    );
    expectLetheError(() => new NammEvolution(options({ capacity: 0 })), 'E_ARG', 'capacity');
    expectLetheError(
      () =>
        new NammEvolution(
          options({ normalization: { mean: new Float32Array(3), std: new Float32Array(17) } }),
        ),
      'E_ARG',
      'normalization.mean',
    );
  });

  it('refuses a checkpoint of another scorer kind or features, or other settings, naming them', async () => {
    const checkpoint = await checkpointAfterOne();
    expectLetheError(
      () =>
        new NammEvolution(
          options({ resumeFrom: checkpoint, scorer: { kind: 'bam', features: 8, hidden: 2 } }),
        ),
      'E_CHECKPOINT',
      'scorer',
    );
    expectLetheError(
      () =>
        new NammEvolution(
          options({
            resumeFrom: checkpoint,
            features: 'spectrogram',
            scorer: { kind: 'mlp', features: 25, depth: 1 },
          }),
        ),
      'E_CHECKPOINT',
      'features',
    );
    expectLetheError(
      () => new NammEvolution(options({ resumeFrom: checkpoint, population: 4 })),
      'E_CHECKPOINT',
      'population',
    );
    expectLetheError(
      () => new NammEvolution(options({ resumeFrom: checkpoint, covariance: 'diagonal' })),
      'E_CHECKPOINT',
      'covariance',
    );
    // Its stage may run longer, not shorter than what it has done, nor on other tasks.
    expect(
      () =>
        new NammEvolution(
          options({ resumeFrom: checkpoint, stages: [{ tasks: ['a'], generations: 5 }] }),
        ),
    ).not.toThrow();
    expect(
      () =>
        new NammEvolution(
          options({ resumeFrom: checkpoint, stages: [{ tasks: ['a'], generations: 1 }] }),
        ),
    ).not.toThrow();

    // Stages may be added after the checkpoint's.
    const more = fakeOptions(
      [
        task,
        fakeTask(
          'b',
          () => 1,
          () => 1,
        ),
      ],
      {
        resumeFrom: checkpoint,
        stages: [
          { tasks: ['a'], generations: 2 },
          { tasks: ['b'], generations: 1 },
        ],
      },
    );
    expect(new NammEvolution(more).generation).toBe(1);
    expectLetheError(
      () => new NammEvolution({ ...more, stages: [{ tasks: ['b'], generations: 2 }] }),
      'E_CHECKPOINT',
      'stages[0]',
    );
  });

  it("records each task's definition and refuses a resume that defines a task that ran otherwise", async () => {
    const defined = (definition: string | undefined) => ({ ...task, definition });
    const first = new NammEvolution(fakeOptions([defined('a at 200')]));
    await first.step();
    const checkpoint = decodeNammCheckpoint(encodeNammCheckpoint(first.checkpoint()), 'ck.json');
    expect(checkpoint.settings.taskDefinitions).toEqual({ a: 'a at 200' });
    const resume = (definition: string | undefined) =>
      fakeOptions([defined(definition)], { resumeFrom: checkpoint });
    expect(new NammEvolution(resume('a at 200')).generation).toBe(1);
    const error = expectLetheError(
      () => new NammEvolution(resume('a at 300')),
      'E_CHECKPOINT',
      'tasks',
    );
    expect(error.message).toContain(
      'task "a" is defined as a at 300 but the checkpoint\'s run defined it as a at 200',
    );
    expectLetheError(() => new NammEvolution(resume(undefined)), 'E_CHECKPOINT', 'tasks');
    // A checkpoint written before tasks had definitions cannot be checked, and resumes.
    const older = await checkpointAfterOne();
    expect(older.settings.taskDefinitions).toBeUndefined();
    expect(
      new NammEvolution(fakeOptions([defined('a at 300')], { resumeFrom: older })).generation,
    ).toBe(1);
    // A task that has not run yet may be defined anew.
    const withB = (definition: string) =>
      fakeOptions(
        [
          defined('a at 200'),
          {
            ...fakeTask(
              'b',
              () => 1,
              () => 1,
            ),
            definition,
          },
        ],
        {
          resumeFrom: checkpoint,
          stages: [
            { tasks: ['a'], generations: 2 },
            { tasks: ['b'], generations: 1 },
          ],
        },
      );
    expect(new NammEvolution(withB('b anew')).generation).toBe(1);
    expectLetheError(
      () => new NammEvolution(fakeOptions([{ ...task, definition: 3 as unknown as string }])),
      'E_ARG',
      'tasks[0].definition',
    );
  });

  it('refuses checkpoint text of another format or version, or with a malformed field (E_FORMAT)', async () => {
    const text = encodeNammCheckpoint(await checkpointAfterOne());
    const json = JSON.parse(text);
    expectLetheError(
      () => decodeNammCheckpoint(JSON.stringify({ ...json, version: 2 }), 'ck.json'),
      'E_FORMAT',
      'ck.json',
    );
    expectLetheError(
      () =>
        decodeNammCheckpoint(
          JSON.stringify({ ...json, format: 'lethe-ngc-checkpoint' }),
          'ck.json',
        ),
      'E_FORMAT',
      'ck.json',
    );
    expectLetheError(() => decodeNammCheckpoint('{', 'ck.json'), 'E_FORMAT', 'ck.json');
    expectLetheError(
      () =>
        decodeNammCheckpoint(
          JSON.stringify({ ...json, settings: { ...json.settings, seed: 'x' } }),
          'ck.json',
        ),
      'E_FORMAT',
      'ck.json.settings.seed',
    );
    expectLetheError(
      () =>
        decodeNammCheckpoint(
          JSON.stringify({ ...json, es: { ...json.es, mean: { float64: 'AAA' } } }),
          'ck.json',
        ),
      'E_FORMAT',
      'ck.json.es.mean',
    );
    const broken = decodeNammCheckpoint(
      JSON.stringify({ ...json, es: { ...json.es, sigma: 'wide' } }),
    );
    expectLetheError(
      () => new NammEvolution(options({ resumeFrom: broken })),
      'E_FORMAT',
      'state.sigma',
    );
  });
});
