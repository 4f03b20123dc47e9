/**
 * The messages between the page and its generation worker. The worker owns tfjs, the models and
 * the policies; the page only draws what it is sent, so it stays responsive while a model runs.
 */

/** Where a model comes from: a shipped one (its id in `shipped.json`) or a picked folder. */
export type ModelSource =
  | { readonly kind: 'shipped'; readonly id: string }
  | { readonly kind: 'picked'; readonly files: readonly File[] };

/** A policy as a lane asks for it (the CLI's `--policy`, `--policy-options`, `--budget`). */
export interface LaneRequest {
  /** Registry name, or names joined by `+` (a composition). */
  readonly policy: string;
  /** Kept fraction in (0, 1] of the full-cache length (1 for the full cache). */
  readonly budget: number;
  /**
   * Provider options, a JSON object as the CLI's `--policy-options` (by part name for a
   * composition); undefined for none.
   */
  readonly options: Readonly<Record<string, unknown>> | undefined;
  /**
   * A policy directory the visitor picked (its files), read by the lane's learned part instead of
   * the one shipped for the model; undefined for the shipped one.
   */
  readonly policyFolder: readonly File[] | undefined;
}

/** What the page asks of the worker. */
export type Request =
  | {
      readonly type: 'backend';
      /** The page's URL: shipped models and tfjs's wasm binaries lie below it. */
      readonly base: string;
      readonly backend: 'wasm' | 'webgpu';
    }
  | { readonly type: 'load'; readonly source: ModelSource }
  | {
      readonly type: 'generate';
      readonly lanes: readonly LaneRequest[];
      readonly prompt: string;
      /**
       * Wrap the prompt as a user message in the model's chat template (a Hugging Face directory
       * with one), the assistant's turn opened for the model to write.
       */
      readonly chat: boolean;
      /** The task example the prompt was drawn from (`example` request), for its verdict. */
      readonly example: { readonly seed: number; readonly index: number } | undefined;
      readonly seed: number;
      readonly temperature: number;
      /** Most generated tokens; undefined: the task's allowance, else 200 (as `lethe generate`). */
      readonly maxNewTokens: number | undefined;
    }
  | { readonly type: 'example'; readonly seed: number; readonly index: number };

/** A model as the page shows it once loaded. */
export interface ModelInfo {
  readonly location: string;
  readonly layers: number;
  readonly kvHeads: number;
  readonly queryHeads: number;
  readonly headDim: number;
  readonly vocabSize: number;
  /** The task of a task model, undefined for a Hugging Face directory. */
  readonly task: string | undefined;
  /** Whether it has a chat template. */
  readonly chatTemplate: boolean;
  /** Bytes read to load it. */
  readonly bytes: number;
  readonly loadMs: number;
}

/** What the worker tells the page. */
export type Reply =
  | { readonly type: 'backend'; readonly backend: string; readonly webgpu: boolean }
  | { readonly type: 'progress'; readonly file: string; readonly bytes: number }
  | { readonly type: 'loaded'; readonly model: ModelInfo; readonly policies: readonly string[] }
  | {
      readonly type: 'example';
      readonly index: number;
      readonly prompt: string;
      /** Whether the task verifies an answer (a generation task; the LM's is a document). */
      readonly verifiable: boolean;
    }
  | { readonly type: 'lane-start'; readonly lane: number; readonly start: LaneStart }
  | { readonly type: 'token'; readonly lane: number; readonly text: string }
  | { readonly type: 'step'; readonly lane: number; readonly step: StepSnapshot }
  | { readonly type: 'lane-done'; readonly lane: number; readonly result: LaneResult }
  | {
      readonly type: 'error';
      readonly lane?: number;
      readonly message: string;
      readonly code?: string;
    };

/** How a lane's generation was set up, sent before its first token. */
export interface LaneStart {
  readonly policy: string;
  /** The budgets built, in words (one per part). */
  readonly budgets: readonly string[];
  /** The prompt as fed (a policy may condition it: NGC's tag). */
  readonly prompt: string;
  /** Its tokens (BOS included where the tokenizer has one). */
  readonly promptTokens: number;
  readonly fullCacheLength: number;
  readonly layers: number;
  readonly kvHeads: number;
}

/**
 * What the cache held at one step — before a prefill chunk, before a decode step, or after the
 * last — numbered from 0: live entries per (layer, KV head) and the positions each head dropped
 * since the previous snapshot.
 */
export interface StepSnapshot {
  readonly step: number;
  /** Glyphs of the positions fed since the previous snapshot (the prompt's at step 0). */
  readonly glyphs: readonly string[];
  /** Positions fed so far. */
  readonly positions: number;
  /** `[layer * kvHeads + head]` live entries. */
  readonly live: readonly number[];
  /** `[layer * kvHeads + head]` positions evicted since the previous snapshot. */
  readonly evicted: readonly (readonly number[])[];
  /** The scores of each layer's latest eviction round since the previous snapshot. */
  readonly rounds: readonly RoundScores[];
}

/** The scores an eviction round chose from (policies that score entries: `KeepDecision.scores`). */
export interface RoundScores {
  readonly layer: number;
  /** Per KV head: the live positions the round saw, and their scores (higher: more worth keeping). */
  readonly heads: readonly { readonly positions: number[]; readonly scores: number[] }[];
}

/** A lane's outcome. */
export interface LaneResult {
  readonly text: string;
  readonly tokens: number;
  readonly finishReason: string;
  /** `[layer][head]` live entries after the last step. */
  readonly livePerHead: readonly (readonly number[])[];
  readonly livePerLayer: readonly number[];
  readonly peakPerLayer: readonly number[];
  /** Positions fed to the cache (prompt, then every generated token but the last). */
  readonly fed: number;
  readonly peakTotal: number;
  /** Bytes of the live entries, and what the full cache would hold for the same tokens. */
  readonly bytesLive: number;
  readonly bytesFull: number;
  /** Peak entries over what the full cache holds at the end: the budget realised. */
  readonly realisedBudget: number;
  readonly evictionRounds: number;
  readonly reads: { readonly entries: number; readonly live: number };
  readonly tokensPerSecond: number;
  /** Milliseconds from the start of the lane to its first token. */
  readonly firstTokenMs: number;
  /** The task's verdict on the answer (task models with a generation task). */
  readonly verdict: { readonly correct: boolean; readonly reason?: string } | undefined;
  /** The tfjs backend it ran on. */
  readonly backend: string;
  /** Where the cache lived: `@lethe/kernels-webgpu`'s device pages, or host typed arrays. */
  readonly cache: 'DeviceKVCache (WebGPU device pages)' | 'KVCache (host memory)' | 'another cache';
  /** Tensors tfjs holds after the lane (the model's weights; more would be a leak). */
  readonly tensors: number;
}
