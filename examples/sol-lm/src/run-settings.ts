import type { ActionPreset } from '@lethe/policies-sol';
import type { PrefixRange } from '@lethe/policies-sol/train';

/** Everything that determines a trained controller: a run directory is tied to one of these. */
export interface SolRunSettings {
  /** Task-model directory of the frozen LM (a `lethe pretrain` directory of the `lm` task). */
  readonly model: string;
  /** The action set (an App. B preset, or `C-10` for token sparsity alone: κ 0.1, 0.2, …, 1). */
  readonly actions: ActionPreset | 'C-10';
  /** Episode length `T`. */
  readonly horizon: number;
  /** Tokens prefilled densely before each training episode, or a range drawn from per input. */
  readonly prefix: number | PrefixRange;
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
