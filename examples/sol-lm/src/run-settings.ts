import { LetheError } from '@lethe/core';
import type { ActionPreset } from '@lethe/policies-sol';
import type { PrefixRange } from '@lethe/policies-sol/train';

/** Everything that determines a trained controller: a run directory is tied to one of these. */
export interface SolRunSettings {
  /**
   * Task-model directory of the frozen LM (a `lethe pretrain` directory): the `lm` task, or a
   * generation task (its controller trains on the model's own answers).
   */
  readonly model: string;
  /** A model directory whose weights replace the task model's (same shape), e.g. `models/countdown-rl`. */
  readonly weights?: string;
  /** The action set (an App. B preset, or `C-10` for token sparsity alone: κ 0.1, 0.2, …, 1). */
  readonly actions: ActionPreset | 'C-10';
  /** Episode length `T`. */
  readonly horizon: number;
  /**
   * Language modelling: tokens prefilled densely before each training episode, or a range drawn
   * from per input (default {@link DEFAULT_PREFIX}).
   */
  readonly prefix?: number | PrefixRange;
  /**
   * Generation tasks: training prompts answered by the frozen model, whose answers the episodes
   * run over (default {@link DEFAULT_ANSWERS}).
   */
  readonly answers?: number;
  /** Inputs per update `B`. */
  readonly batchSize: number;
  /** Schedules per input `K`. */
  readonly groupSize: number;
  /** GRPO updates. */
  readonly updates: number;
  /** AdamW learning rate. */
  readonly lr: number;
  /** Penalty weights `[α_κ, α_ρ, α_η]` of eq. 2 (the reference code's: 100 / 100 / 200). */
  readonly penaltyWeights: readonly [number, number, number];
  /** Controller width. */
  readonly width: number;
  /** Seed of the controller's initialisation and of every draw of the run. */
  readonly seed: number;
}

/** Prefix of a language-modelling run unless told otherwise. */
export const DEFAULT_PREFIX = 128;

/** Training prompts answered for a generation-task run unless told otherwise. */
export const DEFAULT_ANSWERS = 512;

/**
 * The settings with the defaults of the task's kind filled in: `prefix` for language modelling,
 * `answers` for a generation task.
 *
 * @throws LetheError `E_ARG` naming `--answers` for a language-modelling run that sets it, or
 *   `--prefix` for a generation-task run that sets it (its episodes start after the prompt).
 */
export function resolveRunSettings(
  settings: SolRunSettings,
  kind: 'generation' | 'perplexity',
): SolRunSettings {
  if (kind === 'perplexity') {
    if (settings.answers !== undefined) {
      throw new LetheError(
        'E_ARG',
        'applies to generation tasks; a language model trains on windows of its text',
        '--answers',
      );
    }
    return { ...settings, prefix: settings.prefix ?? DEFAULT_PREFIX };
  }
  if (settings.prefix !== undefined) {
    throw new LetheError(
      'E_ARG',
      "applies to language modelling; a generation task's episodes start in its model's answers, after the prompt",
      '--prefix',
    );
  }
  return { ...settings, answers: settings.answers ?? DEFAULT_ANSWERS };
}
