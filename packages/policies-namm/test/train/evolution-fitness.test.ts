import { CMAES } from '@lethe/es-cmaes';
import { describe, expect, it } from 'vitest';
import { NammEvolution } from '../../src/train/namm-evolution';
import { AGE_MLP, fakeEvaluator, fakeOptions, fakeTask } from './fake-evaluation';

const scoreA = (m: number, id: number) => m + id;
const scoreB = (m: number, id: number) => 2 * m + (id % 2);
const taskA = fakeTask('a', (id) => id + 1, scoreA);
const taskB = fakeTask('b', () => 2, scoreB);
const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;
const dimension = 81;

describe('NammEvolution fitness', () => {
  it("normalises each task's mean score by the full cache's on the same prompts, averaged over tasks", async () => {
    const evaluate = fakeEvaluator();
    const evolution = new NammEvolution(
      fakeOptions([taskA, taskB], {
        stages: [{ tasks: ['a', 'b'], generations: 2 }],
        evaluate,
      }),
    );
    const reference = new CMAES({
      x0: new Float64Array(dimension),
      sigma0: 0.5,
      populationSize: 3,
      seed: 7,
    });
    for (let g = 0; g < 2; g++) {
      const record = await evolution.step();
      // Generation g samples ids g, g + 1 of each task (promptsPerTask 2).
      const ids = [g % 4, (g + 1) % 4];
      const fitness = (m: number) =>
        (mean(ids.map((id) => scoreA(m, id))) / mean(ids.map((id) => id + 1)) +
          mean(ids.map((id) => scoreB(m, id))) / 2) /
        2;
      expect(record.fitness).toEqual([0, 1, 2].map(fitness));
      expect(record.fitnessMean).toBeCloseTo(mean([0, 1, 2].map(fitness)), 12);
      expect(record.fitnessBest).toBe(fitness(2));
      // The mean is member 3 of the job.
      expect(record.meanScores.a).toBe(
        mean(ids.map((id) => scoreA(3, id))) / mean(ids.map((id) => id + 1)),
      );
      expect(record.meanFitness).toBe(fitness(3));
      expect(record.populationCacheSize).toBeCloseTo(mean([1 / 2, 1 / 3, 1 / 4]), 12);
      expect(record.meanCacheSize).toBe(1 / 5);
      // CMA-ES maximises the fitness: it is told the negation.
      const asked = reference.ask();
      expect(evaluate.jobs.at(-1)!.genomes.slice(0, 3)).toEqual(asked);
      reference.tell(
        asked,
        [0, 1, 2].map((m) => -fitness(m)),
      );
      expect(evolution.parameters().genome).toEqual(reference.mean);
    }
  });

  it('generates and scores each example with the full cache once, whatever generation samples it again', async () => {
    const evaluate = fakeEvaluator();
    const evolution = new NammEvolution(
      fakeOptions([taskA], { stages: [{ tasks: ['a'], generations: 5 }], evaluate }),
    );
    await evolution.train();
    const fullCacheJobs = evaluate.jobs.filter((job) => job.genomes[0] === null);
    // Generations 0…4 sample ids {0,1}, {1,2}, {2,3}, {3,0}, {0,1}: new ones at 0, 1 and 2 only.
    expect(fullCacheJobs.map((job) => job.requests.map((r) => r.prompt[0]))).toEqual([
      [0, 1],
      [2],
      [3],
    ]);
    expect(evolution.checkpoint().fullCacheScores).toEqual({
      a: { '0': 1, '1': 2, '2': 3, '3': 4 },
    });
  });

  it('records a NaN fitness for a member whose score is not finite and ranks it last', async () => {
    const nanTask = fakeTask(
      'a',
      (id) => id + 1,
      (m, id) => (m === 1 ? Number.NaN : m + id),
    );
    const evaluate = fakeEvaluator();
    const evolution = new NammEvolution(fakeOptions([nanTask], { evaluate }));
    const record = await evolution.step();
    expect(record.fitness).toHaveLength(3);
    expect(record.fitness[1]).toBeNaN();
    expect(Number.isFinite(record.fitness[0]!) && Number.isFinite(record.fitness[2]!)).toBe(true);
    expect(record.fitnessMean).toBe(mean([record.fitness[0]!, record.fitness[2]!]));
    // Ranked as the worst: the update equals one where member 1 had the worst finite fitness.
    const reference = new CMAES({
      x0: new Float64Array(dimension),
      sigma0: 0.5,
      populationSize: 3,
      seed: 7,
    });
    const asked = reference.ask();
    reference.tell(asked, [-record.fitness[0]!, 1e300, -record.fitness[2]!]);
    expect(evolution.parameters().genome).toEqual(reference.mean);
    // The checkpoint keeps the NaN.
    expect(evolution.checkpoint().history[0]!.fitness[1]).toBeNaN();
  });

  it('refuses a generation in which every fitness is NaN, and a stuck CMA-ES afterwards', async () => {
    const nanTask = fakeTask(
      'a',
      (id) => id + 1,
      () => Number.NaN,
    );
    const evolution = new NammEvolution(fakeOptions([nanTask]));
    await expect(evolution.step()).rejects.toMatchObject({ code: 'E_ARG', argument: 'fitness' });
    await expect(evolution.step()).rejects.toMatchObject({ code: 'E_STATE', argument: 'step' });
  });

  it('refuses a task the full cache scores 0 on, asking for more prompts', async () => {
    const zero = fakeTask(
      'a',
      () => 0,
      (m) => m,
    );
    const evolution = new NammEvolution(fakeOptions([zero]));
    await expect(evolution.step()).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'promptsPerTask',
      message: expect.stringContaining('sample more prompts'),
    });
    const infinite = fakeTask(
      'a',
      () => Number.POSITIVE_INFINITY,
      (m) => m,
    );
    await expect(new NammEvolution(fakeOptions([infinite])).step()).rejects.toMatchObject({
      code: 'E_ARG',
      argument: 'tasks[0].score',
    });
  });

  it("starts each stage's fresh CMA-ES at the previous stage's mean, with σ0 and seed + stage", async () => {
    const evaluate = fakeEvaluator();
    const evolution = new NammEvolution(
      fakeOptions([taskA, taskB], {
        stages: [
          { tasks: ['a'], generations: 2 },
          { tasks: ['b'], generations: 1 },
        ],
        evaluate,
      }),
    );
    await evolution.step();
    await evolution.step();
    const stageMean = evolution.parameters().genome;
    const record = await evolution.step();
    expect(evolution.done).toBe(true);
    expect(record).toMatchObject({ generation: 3, stage: 1 });
    expect(Object.keys(record.meanScores)).toEqual(['a', 'b']);
    const job = evaluate.jobs.at(-1)!;
    expect(job.genomes[3]).toEqual(stageMean);
    const fresh = new CMAES({ x0: stageMean, sigma0: 0.5, populationSize: 3, seed: 8 });
    expect(job.genomes.slice(0, 3)).toEqual(fresh.ask());
    const checkpoint = evolution.checkpoint();
    expect(checkpoint.stage).toBe(1);
    expect(checkpoint.es.generation).toBe(1);
    await expect(evolution.step()).rejects.toMatchObject({ code: 'E_STATE' });
  });

  it('reports progress with an ETA after every generation', async () => {
    const reports: number[][] = [];
    const evolution = new NammEvolution(
      fakeOptions([taskA], {
        stages: [{ tasks: ['a'], generations: 3 }],
        onProgress: (p) => reports.push([p.generation, p.totalGenerations, p.etaSeconds]),
      }),
    );
    const result = await evolution.train();
    expect(result).toMatchObject({ generation: 3, stopped: false });
    expect(reports.map((r) => r.slice(0, 2))).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(reports[2]![2]).toBe(0);
    expect(reports[0]![2]).toBeGreaterThanOrEqual(0);
  });

  it('stops before the next generation when the signal aborts', async () => {
    const controller = new AbortController();
    const evolution = new NammEvolution(
      fakeOptions([taskA], {
        stages: [{ tasks: ['a'], generations: 3 }],
        signal: controller.signal,
        onProgress: () => controller.abort(),
      }),
    );
    expect(await evolution.train()).toMatchObject({ generation: 1, stopped: true });
  });

  it('deploys the CMA-ES mean with the scorer, features and normalisation', async () => {
    const evolution = new NammEvolution(fakeOptions([taskA]));
    await evolution.train();
    const parameters = evolution.parameters();
    expect(parameters.scorer).toEqual(AGE_MLP);
    expect(parameters.features).toBe('age');
    expect(parameters.genome).toEqual(CMAES.fromState(evolution.checkpoint().es).mean);
  });
});
