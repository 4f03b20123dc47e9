import type { Tokenizer } from '@lethe/model';

/** One task instance: what the model is given and, for training, what it should write. */
export interface TaskExample {
  /** Task name, e.g. `"countdown"`. */
  readonly task: string;
  /** The seed and index that regenerate this example exactly. */
  readonly seed: number;
  readonly index: number;
  /** Text given to the model. */
  readonly prompt: string;
  /** Reference completion (training target, e.g. a search trace + answer). */
  readonly target: string;
  /** Task-specific ground truth the verifier needs (numbers, target, needle values, …). */
  readonly data: Readonly<Record<string, unknown>>;
}

/** The verdict of a verifier on one completion. */
export interface Verdict {
  /** Whether the completion solves the example exactly. */
  readonly correct: boolean;
  /** Why not (malformed, wrong arithmetic, number reused, wrong target, …), for reports. */
  readonly reason?: string;
}

/** A generation task: a seeded generator plus an exact verifier. */
export interface GenerationTask<O = unknown> {
  readonly kind: 'generation';
  /** Registry name (`countdown`, `retrieval`, `arithmetic`). */
  readonly name: string;
  /** Options of this instance (difficulty, context length, …), echoed into results. */
  readonly options: O;
  /** The task's small-vocabulary tokenizer (every prompt and target encodes without <unk>). */
  readonly tokenizer: Tokenizer;
  /** Upper bound on generated tokens a correct answer needs (the harness's `maxNewTokens`). */
  readonly maxNewTokens: number;
  /** Marks the end of an answer: generation stops at it. */
  readonly stopText: string;
  /** The example for `(seed, index)`; deterministic. */
  example(seed: number, index: number): TaskExample;
  /** Checks a completion (the generated text only, prompt excluded) against the example. */
  verify(example: TaskExample, completion: string): Verdict;
}

/** A language-modelling task: teacher-forced perplexity on held-out text. */
export interface PerplexityTask<O = unknown> {
  readonly kind: 'perplexity';
  readonly name: string;
  readonly options: O;
  readonly tokenizer: Tokenizer;
  /** Held-out text number `index` for `seed` (deterministic). */
  document(seed: number, index: number): string;
  /** Training text (disjoint from every held-out document). */
  trainingText(seed: number): string;
}

/** Any evaluation task. */
export type Task = GenerationTask | PerplexityTask;
