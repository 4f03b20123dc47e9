import type { NgcLogits, TagForm } from '@lethe/policies-ngc';
import type { NgcVariant } from '@lethe/policies-ngc/train';

/** Everything a training run is made of; recorded with the trained model. */
export interface TrainSettings {
  /** Task-model directory the run starts from (the SFT Countdown model). */
  readonly model: string;
  /**
   * A finished run of the same task model whose trained weights this run starts from (to go on
   * with its curriculum); absent: the task model's own weights.
   */
  readonly init?: string;
  readonly variant: NgcVariant;
  readonly steps: number;
  readonly promptsPerStep: number;
  readonly groupSize: number;
  /** Retention rates of the staircase curriculum (eq. 6). */
  readonly retention: readonly number[];
  readonly stageSteps: number;
  readonly blend: number;
  /** NGC cadence δ, block size b, window w and score-to-logit map. */
  readonly cadence: number;
  readonly blockSize: number;
  readonly window: number;
  readonly logits: NgcLogits;
  readonly temperature: number;
  readonly maxNewTokens: number;
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly adamEpsilon: number;
  readonly weightDecay: number;
  readonly clipNorm: number;
  readonly microBatch: number;
  readonly minLengthPenalty: boolean;
  /** Append `<eviction_rate>p%</eviction_rate>` to every prompt (§5.3); extends the vocabulary. */
  readonly interoception: boolean;
  /**
   * How the tag is tokenized: one token per character, or its markup strings as one token each
   * (`interoceptionTokenizer` of `@lethe/policies-ngc/train`); absent in runs recorded before it
   * existed.
   */
  readonly tagTokens: TagForm;
  /** Supervised updates before RL (`taskSftWarmup`; tagged prompts with interoception). */
  readonly sftWarmupSteps: number;
  readonly seed: number;
  readonly checkpointEvery: number;
}

/**
 * The defaults: the paper's Countdown recipe (App. A.1, §5.1–5.2) scaled to the project's tiny
 * model and short traces. A prompt is ~28 tokens and a greedy trace ~40 (~75 sampled at 0.9)
 * instead of ≤ 1024 tokens, so the cadence shrinks 256 → 16 (rounds after the prompt, then every
 * 16 tokens; at ε = 0.5 the pre-round cache tends to δ/ε = 32 per head, about half the full
 * cache's peak) and the block size keeps the paper's δ/b = 8 (32 → 2). The window is w = b = 2
 * (the text of §4.2; the hyper-parameter table's w = 5 makes the newest block lose half the
 * rounds when b = 2, see `window-choice`) and block scores enter eq. 2 as log-scores at τ = 0.5
 * (the best sampled policy before RL at ε = 0.2–0.3, see `logits-choice`). ε ends at 0.5 as in
 * Fig. 3 after a finer staircase (steps of 5 points, 10 updates each: ε reaches 0.5 at update
 * 100); 8 prompts × 8 rollouts per step instead of 32 × 16. The learning rate 1e-4 is for this
 * model's scale (the paper's 5e-6 is for a 1.5B model; at 5e-4 even the full-cache run lost half
 * its accuracy); β2 = 0.95, clip 1, temperature 0.9, constant schedule, no KL (Table 1). The
 * README's results say how each choice was measured.
 */
export const DEFAULT_TRAIN_SETTINGS: Omit<TrainSettings, 'model' | 'variant'> = {
  steps: 120,
  promptsPerStep: 8,
  groupSize: 8,
  retention: [1, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5],
  stageSteps: 10,
  blend: 0.6,
  cadence: 16,
  blockSize: 2,
  window: 2,
  logits: { kind: 'log', temperature: 0.5 },
  temperature: 0.9,
  maxNewTokens: 320,
  lr: 1e-4,
  beta1: 0.9,
  beta2: 0.95,
  adamEpsilon: 1e-8,
  weightDecay: 0,
  clipNorm: 1,
  microBatch: 16,
  minLengthPenalty: true,
  interoception: false,
  tagTokens: 'characters',
  sftWarmupSteps: 0,
  seed: 0,
  checkpointEvery: 5,
};
