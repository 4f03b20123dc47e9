import { LetheError } from '@lethe/core';
import { CMAES } from '@lethe/es-cmaes';
import { identityNormalization, type SpectrogramNormalization } from '../features/token-features';
import { checkNammParameters, type NammParameters } from '../policy/namm-parameters';
import { scorerParameterCount } from '../scorer/genome-layout';
import { evaluatePopulation, type PopulationEvaluator } from './evaluate-population';
import type { NammEvaluationSettings } from './evaluation-settings';
import type { NammGenerationRecord } from './evolution-record';
import { fullCacheMean, meanOf, normalizedFitness, summarize } from './fitness';
import { FullCacheScores } from './full-cache-scores';
import { measureSpectrogramNormalization } from './measure-normalization';
import {
  NAMM_CHECKPOINT_FORMAT,
  NAMM_CHECKPOINT_VERSION,
  type NammCheckpoint,
} from './namm-checkpoint';
import {
  checkResume,
  type NammEvolutionOptions,
  type ResolvedSettings,
  resolveOptions,
} from './namm-evolution-options';
import type { NammTask } from './namm-task';
import type { NammCompletion, NammPromptRequest } from './prompt-request';
import { stageAt, stageTasks, totalGenerations } from './stages';

/** Outcome of {@link NammEvolution.train}. */
export interface NammTrainResult {
  /** Generations completed, over all stages (resumed ones included). */
  readonly generation: number;
  /** Whether the signal stopped it before the last stage's end. */
  readonly stopped: boolean;
  /** Every generation's record, resumed ones included. */
  readonly history: readonly NammGenerationRecord[];
}

/** One generation's prompts: per task of the stage, its examples and their requests. */
interface GenerationPrompts {
  readonly tasks: readonly NammTask[];
  readonly examples: readonly (readonly unknown[])[];
  readonly requests: readonly NammPromptRequest[];
}

/**
 * Evolves a NAMM with CMA-ES on a frozen model (the paper's §3.3, App. A.4). Every generation
 * samples `promptsPerTask` prompts of each of the stage's tasks (`task.example(generation, i)`),
 * asks CMA-ES for a population, completes the prompts greedily with every member's NAMM and with
 * the current mean (for the per-task curves of the paper's Fig. 4), scores the completions, and
 * tells CMA-ES the negated fitness: the mean over tasks of the member's mean score divided by
 * the full-cache model's on the same prompts (computed once per example and cached). A member
 * whose score is not finite has fitness NaN, recorded and ranked last.
 *
 * Stages are incremental: stage s adds tasks and starts a fresh CMA-ES (σ0, identity covariance,
 * seed `seed + s`) at the previous stage's mean, the distribution's centre and the policy this
 * trainer deploys, where the reference code resumes from its best checkpoint.
 *
 * After every generation the trainer hands a {@link NammCheckpoint} to `onCheckpoint`; a trainer
 * given it as `resumeFrom` continues with bit-identical genomes and history (wall times aside).
 *
 * @example
 * ```ts
 * const evolution = new NammEvolution({
 *   model, tasks: [retrieval, qa], promptsPerTask: 64,
 *   stages: [{ tasks: ['retrieval'], generations: 300 }, { tasks: ['qa'], generations: 250 }],
 *   onCheckpoint: (c) => writeNammCheckpoint('namm.checkpoint.json', c),
 * });
 * await evolution.train();
 * await writePolicyDirectory('policies/namm', nammPolicyContents(evolution.parameters()));
 * ```
 */
export class NammEvolution {
  private readonly options: NammEvolutionOptions;
  private readonly settings: ResolvedSettings;
  private readonly tasks: ReadonlyMap<string, NammTask>;
  private readonly evaluate: PopulationEvaluator;
  private es: CMAES;
  private stage: number;
  private completed: number;
  private readonly records: NammGenerationRecord[];
  private readonly fullCache: FullCacheScores;
  private normalization: SpectrogramNormalization | undefined;
  private sessionSeconds = 0;
  private sessionGenerations = 0;

  /**
   * @throws LetheError `E_ARG` naming the bad option (see `resolveOptions`); with `resumeFrom`,
   *   `E_CHECKPOINT` naming the setting that differs from the checkpoint's (see `checkResume`)
   *   and `E_FORMAT` naming the field of a malformed CMA-ES state.
   */
  constructor(options: NammEvolutionOptions) {
    this.settings = resolveOptions(options);
    this.options = options;
    this.tasks = new Map(options.tasks.map((task) => [task.name, task]));
    this.evaluate = options.evaluate ?? ((job) => evaluatePopulation(options.model, job));
    this.normalization =
      options.normalization ??
      (this.settings.features === 'age' ? identityNormalization() : undefined);
    const checkpoint = options.resumeFrom;
    if (checkpoint === undefined) {
      this.es = this.freshCMAES(
        options.initialGenome ?? new Float64Array(scorerParameterCount(this.settings.scorer)),
        0,
      );
      this.stage = 0;
      this.completed = 0;
      this.records = [];
      this.fullCache = new FullCacheScores();
      return;
    }
    checkResume(checkpoint, this.settings, options.normalization);
    this.es = CMAES.fromState(checkpoint.es);
    if (
      this.es.dimension !== scorerParameterCount(this.settings.scorer) ||
      this.es.populationSize !== this.settings.population ||
      checkpoint.stage !== stageAt(this.settings.stages, Math.max(checkpoint.generation - 1, 0))
    ) {
      throw new LetheError(
        'E_FORMAT',
        "the CMA-ES state or stage does not match the checkpoint's settings",
        'checkpoint',
      );
    }
    this.stage = checkpoint.stage;
    this.completed = checkpoint.generation;
    this.records = [...checkpoint.history];
    this.fullCache = FullCacheScores.fromJSON(checkpoint.fullCacheScores);
    this.normalization = {
      mean: Float32Array.from(checkpoint.settings.normalization.mean),
      std: Float32Array.from(checkpoint.settings.normalization.std),
    };
  }

  /** Generations completed, over all stages. */
  get generation(): number {
    return this.completed;
  }

  /** Whether every stage's generations have run. */
  get done(): boolean {
    return this.completed >= totalGenerations(this.settings.stages);
  }

  /** Every generation's record so far (a copy). */
  get history(): NammGenerationRecord[] {
    return [...this.records];
  }

  /**
   * Runs (or continues) the evolution to the last stage's end, or until `signal` aborts
   * (checked before every generation).
   *
   * @throws LetheError as {@link NammEvolution.step}.
   */
  async train(): Promise<NammTrainResult> {
    let stopped = false;
    while (!this.done) {
      if (this.options.signal?.aborted) {
        stopped = true;
        break;
      }
      await this.step();
    }
    return { generation: this.completed, stopped, history: this.history };
  }

  /**
   * Runs one generation: sample, evaluate, update, record, checkpoint, report.
   *
   * @throws LetheError `E_STATE` when every stage has run, or after a generation that failed
   *   part-way (resume from the last checkpoint); `E_ARG` naming `promptsPerTask` when the
   *   full-cache model's mean score on a task's prompts is not > 0, `tasks[i].score` for a
   *   non-finite full-cache score, `fitness` when every member's fitness is NaN; `E_STATE` naming
   *   `evaluate` for an evaluator that returns another shape; the evaluator's errors.
   */
  async step(): Promise<NammGenerationRecord> {
    const total = totalGenerations(this.settings.stages);
    if (this.done) throw new LetheError('E_STATE', `all ${total} generations have run`, 'step');
    if (this.es.awaitingTell) {
      throw new LetheError(
        'E_STATE',
        'a generation failed part-way: resume from the last checkpoint',
        'step',
      );
    }
    const started = performance.now();
    const generation = this.completed;
    const stage = stageAt(this.settings.stages, generation);
    const prompts = this.promptsOf(stage, generation);
    const settings = await this.evaluationSettings(prompts.requests);
    const baselines = await this.fullCacheMeans(prompts, settings, generation);
    if (stage !== this.stage) {
      this.es = this.freshCMAES(this.es.mean, stage);
      this.stage = stage;
    }
    const genomes = this.es.ask();
    const completions = await this.run([...genomes, this.es.mean], prompts.requests, settings);
    const scored = completions.map((member) =>
      normalizedFitness(this.scoresOf(prompts, member), baselines),
    );
    const fitness = scored.slice(0, -1).map((s) => s.fitness);
    if (fitness.every(Number.isNaN)) {
      throw new LetheError(
        'E_ARG',
        `every member's fitness is NaN at generation ${generation + 1}: a task scored a completion with a non-finite number`,
        'fitness',
      );
    }
    this.es.tell(
      genomes,
      fitness.map((f) => -f),
    );
    const summary = summarize(fitness);
    const mean = scored[scored.length - 1]!;
    const liveRatios = (members: NammCompletion[][]) =>
      meanOf(members.flat().map((c) => c.liveRatio));
    const seconds = (performance.now() - started) / 1000;
    const record: NammGenerationRecord = {
      generation: generation + 1,
      stage,
      fitness,
      fitnessMean: summary.mean,
      fitnessStd: summary.std,
      fitnessBest: summary.best,
      meanScores: Object.fromEntries(prompts.tasks.map((task, t) => [task.name, mean.perTask[t]!])),
      meanFitness: mean.fitness,
      populationCacheSize: liveRatios(completions.slice(0, -1)),
      meanCacheSize: liveRatios(completions.slice(-1)),
      sigma: this.es.sigma,
      seconds,
    };
    this.records.push(record);
    this.completed++;
    await this.options.onCheckpoint?.(this.checkpoint());
    this.sessionSeconds += (performance.now() - started) / 1000;
    this.sessionGenerations++;
    this.options.onProgress?.({
      generation: this.completed,
      totalGenerations: total,
      stage,
      bestFitness: summary.best,
      meanFitness: summary.mean,
      cacheSize: record.populationCacheSize,
      seconds,
      etaSeconds: (this.sessionSeconds / this.sessionGenerations) * (total - this.completed),
    });
    return record;
  }

  /**
   * The NAMM to deploy: the CMA-ES mean as genome, with the scorer, features and normalisation.
   *
   * @throws LetheError `E_STATE` before the normalisation is measured (the first generation).
   */
  parameters(): NammParameters {
    return checkNammParameters({
      scorer: this.settings.scorer,
      features: this.settings.features,
      genome: this.es.mean,
      normalization: this.measured(),
    });
  }

  /**
   * The trainer's state as a {@link NammCheckpoint} (what `onCheckpoint` receives).
   *
   * @throws LetheError `E_STATE` before the normalisation is measured (the first generation).
   */
  checkpoint(): NammCheckpoint {
    const normalization = this.measured();
    return {
      format: NAMM_CHECKPOINT_FORMAT,
      version: NAMM_CHECKPOINT_VERSION,
      settings: {
        ...this.settings,
        normalization: { mean: [...normalization.mean], std: [...normalization.std] },
      },
      stage: this.stage,
      generation: this.completed,
      es: this.es.state(),
      history: this.history,
      fullCacheScores: this.fullCache.toJSON(),
    };
  }

  private measured(): SpectrogramNormalization {
    if (this.normalization === undefined) {
      throw new LetheError(
        'E_STATE',
        'the spectrogram normalisation is measured at the first generation: run step() first, or pass normalization',
        'normalization',
      );
    }
    return this.normalization;
  }

  private freshCMAES(mean: ArrayLike<number>, stage: number): CMAES {
    return new CMAES({
      x0: mean,
      sigma0: this.settings.sigma0,
      populationSize: this.settings.population,
      diagonal: this.settings.covariance === 'diagonal',
      seed: this.settings.seed + stage,
    });
  }

  /** The evaluation settings, measuring the normalisation on `requests` the first time. */
  private async evaluationSettings(
    requests: readonly NammPromptRequest[],
  ): Promise<NammEvaluationSettings> {
    this.normalization ??= await measureSpectrogramNormalization(this.options.model, requests, {
      updateInterval: this.settings.updateInterval,
    });
    const { scorer, features, updateInterval, threshold, equalHeads, capacity } = this.settings;
    return {
      scorer,
      features,
      normalization: this.normalization,
      updateInterval,
      threshold,
      equalHeads,
      ...(capacity === null ? {} : { capacity }),
    };
  }

  private promptsOf(stage: number, generation: number): GenerationPrompts {
    const tasks = stageTasks(this.settings.stages, stage).map((name) => this.tasks.get(name)!);
    const examples = tasks.map((task) =>
      Array.from({ length: this.settings.promptsPerTask }, (_, i) => task.example(generation, i)),
    );
    const requests = tasks.flatMap((task, t) =>
      examples[t]!.map((example) => ({
        prompt: task.prompt(example),
        maxNewTokens: task.maxNewTokens,
        stop: task.stop,
      })),
    );
    return { tasks, examples, requests };
  }

  /** Each task's scores of one member's completions, task by task. */
  private scoresOf(prompts: GenerationPrompts, completions: NammCompletion[]): number[][] {
    let r = 0;
    return prompts.tasks.map((task, t) =>
      prompts.examples[t]!.map((example) => task.score(example, completions[r++]!.tokens)),
    );
  }

  /** Each task's full-cache mean score on the generation's prompts, generating those not cached. */
  private async fullCacheMeans(
    prompts: GenerationPrompts,
    settings: NammEvaluationSettings,
    generation: number,
  ): Promise<number[]> {
    const missing = new Map<string, { task: NammTask; key: string; example: unknown; r: number }>();
    let r = 0;
    prompts.tasks.forEach((task, t) => {
      for (const example of prompts.examples[t]!) {
        const key = task.key(example);
        const id = JSON.stringify([task.name, key]);
        if (this.fullCache.get(task.name, key) === undefined && !missing.has(id)) {
          missing.set(id, { task, key, example, r });
        }
        r++;
      }
    });
    if (missing.size > 0) {
      const wanted = [...missing.values()];
      const [completions] = await this.run(
        [null],
        wanted.map((m) => prompts.requests[m.r]!),
        settings,
      );
      wanted.forEach(({ task, key, example }, i) => {
        const score = task.score(example, completions![i]!.tokens);
        if (!Number.isFinite(score)) {
          throw new LetheError(
            'E_ARG',
            `returned ${score} for the full-cache completion of example "${key}": scores must be finite`,
            `tasks[${this.options.tasks.indexOf(task)}].score`,
          );
        }
        this.fullCache.set(task.name, key, score);
      });
    }
    return prompts.tasks.map((task, t) =>
      fullCacheMean(
        task.name,
        prompts.examples[t]!.map((example) => this.fullCache.get(task.name, task.key(example))!),
        generation + 1,
      ),
    );
  }

  /** Runs the evaluator and checks the shape of what it returns. */
  private async run(
    genomes: (Float64Array | null)[],
    requests: readonly NammPromptRequest[],
    settings: NammEvaluationSettings,
  ): Promise<NammCompletion[][]> {
    const completions = await this.evaluate({ genomes, requests, settings });
    if (
      completions.length !== genomes.length ||
      completions.some((member) => member.length !== requests.length)
    ) {
      throw new LetheError(
        'E_STATE',
        `must return ${genomes.length} members × ${requests.length} completions`,
        'evaluate',
      );
    }
    return completions;
  }
}
