import type { InferOutput, ObjectEntries, StrictObjectSchema } from 'valibot';
import type { ComputePolicy } from './compute-policy';
import type { EvictionPolicy } from './eviction-policy';
import type { PolicyDirectory } from './policy-directory';
import type { PromptConditioning } from './prompt-conditioning';
import type { ReadSelector } from './read-selector';

/** The shape of the model a policy will serve: what a provider may size a policy by. */
export interface PolicyModelShape {
  /** Transformer layers. */
  readonly layers: number;
  /** KV heads per layer. */
  readonly kvHeads: number;
  /** Query heads per layer (a multiple of `kvHeads`). */
  readonly queryHeads: number;
  /** Key/value vector width. */
  readonly headDim: number;
  /** Width of the final hidden state. */
  readonly hiddenSize: number;
  /**
   * Vocabulary size, where the runtime knows it (`@lethe/model`'s `policyContextOf` always
   * gives it): a policy reading token embeddings (SOL) checks it was trained on this vocabulary.
   */
  readonly vocabSize?: number;
}

/** What a provider knows about where its policy runs. */
export interface PolicyContext {
  /** The model's shape. */
  readonly model: PolicyModelShape;
  /**
   * Sequences the built policies serve together (one batch). A policy object is shared by them;
   * per-sequence memory goes through `EvictionPolicy.createState`.
   */
  readonly sequences: number;
}

/**
 * A budget ceiling. `capacity` is the most live entries a KV head may hold at any point of
 * decoding, the token just appended included — the memory a runtime must provision. A policy
 * meets it by leaving at most `capacity − 1` entries after a round ({@link entriesAfterRound}), so
 * the next token fits; a policy with a trigger slack `s` or a cadence may exceed it by its
 * declared slack, and a prefill chunk of `c` tokens by `c − 1`.
 */
export interface CapacityBudget {
  /** Most live entries per KV head, an integer ≥ 2 (one kept entry plus the newest token). */
  readonly capacity: number;
}

/**
 * A rate schedule, the grow-then-evict protocol of the NGC paper (§5.1): every `every` tokens a
 * round keeps a fraction `keepRatio` of each KV head's live entries (the eviction rate per round
 * is ε = 1 − `keepRatio`), so every method evicts at the same rounds and rate and a comparison
 * isolates *what* is kept. Memory is not bounded by a fixed number; what it realises is measured.
 */
export interface RateBudget {
  /** Fraction of the live entries a round keeps, in (0, 1]. */
  readonly keepRatio: number;
  /** Tokens between rounds (prefill included), a positive integer. */
  readonly every: number;
}

/**
 * Requested episode-average compute per axis, in the SOL paper's budget units (§4: `C_κ, C_ρ,
 * C_η`), each in [0, 1]: what a compute policy is asked to spend, not a cap it may never exceed
 * (it is steered toward the targets; the runtime records what it realised).
 */
export interface ComputeTargets {
  /** `C_κ`: the token-attention keep rate (the share of live entries each step reads). */
  readonly tokenKeep: number;
  /** `C_ρ`: the MLP input-channel keep rate. */
  readonly mlpInputKeep: number;
  /** `C_η`: the normalised activation precision, bits / 16. */
  readonly precision: number;
}

/**
 * A compute budget, for a compute policy (SOL): per-axis targets of the compute each decode step
 * spends, per request. Memory is not bounded by it: the cache keeps every entry.
 */
export interface ComputeBudget {
  readonly targets: ComputeTargets;
}

/**
 * A read budget, for a read selector (Quest): the most cached entries each KV head reads per
 * decode step (Quest's `token_budget`). Memory is not bounded by it: the cache keeps every entry,
 * and each step reads only the part of it the selector picks.
 */
export interface ReadBudget {
  /** Cached entries each KV head reads per decode step, a positive integer. */
  readonly readTokens: number;
}

/**
 * The budget a policy is built for: a memory ceiling ({@link CapacityBudget}, what serving and
 * the main job use), a rate schedule ({@link RateBudget}), compute targets
 * ({@link ComputeBudget}) or a read budget ({@link ReadBudget}). A provider declares the forms
 * it takes ({@link PolicyProvider.budgetForms}); the registry refuses the others with `E_BUDGET`.
 */
export type PolicyBudget = CapacityBudget | RateBudget | ComputeBudget | ReadBudget;

/** The form of a {@link PolicyBudget}: `capacity`, `rate`, `compute` or `read`. */
export type BudgetForm = 'capacity' | 'rate' | 'compute' | 'read';

/** The forms a provider takes when it does not say: the two memory budgets. */
export const MEMORY_BUDGET_FORMS: readonly BudgetForm[] = Object.freeze(['capacity', 'rate']);

/**
 * The policies a runtime runs for one provider: an eviction policy (what the cache keeps), a
 * read selector (what each step reads), a compute policy (per-step controls) and a prompt
 * conditioning (what the model must be told of its budget), each optional. The empty set is the
 * full cache.
 */
export interface PolicySet {
  readonly eviction?: EvictionPolicy;
  readonly readSelector?: ReadSelector;
  readonly compute?: ComputePolicy;
  readonly prompt?: PromptConditioning;
  /**
   * The ceiling the eviction policy was built for (a {@link CapacityBudget}'s `capacity`: most
   * live entries per KV head, the newest token included), set by the registry when the set has an
   * eviction policy and the budget is a capacity. A runtime ends every prefill chunk where it
   * would take a head past it — the first chunk fills the cache up to the ceiling, then the prompt
   * goes in as fast as the rounds make room (one token per round for a policy that leaves
   * `capacity − 1`) — so the budget bounds the peak during the prompt too, whatever chunk size the
   * runtime was given.
   */
  readonly ceiling?: number;
}

/** The options schema of a provider: a valibot strict object (unknown keys are refused). */
export type PolicyOptionsSchema = StrictObjectSchema<ObjectEntries, undefined>;

/** What {@link PolicyProvider.build} receives. */
export interface PolicyBuildRequest<O, P> {
  /** The budget to respect. */
  readonly budget: PolicyBudget;
  /** The provider's options, validated and with every default filled in. */
  readonly options: O;
  /** The model and batch the policies serve. */
  readonly context: PolicyContext;
  /** Learned parameters loaded by {@link LearnedParameters.load} (`undefined` for heuristics). */
  readonly parameters: P;
}

/**
 * How a learned provider reads its trained parameters from a policy directory (see
 * {@link PolicyDirectory}: `policy.json` with a format version, plus the files it names, e.g.
 * safetensors).
 */
export interface LearnedParameters<P> {
  /**
   * Reads and checks the parameters.
   *
   * @throws LetheError `E_FORMAT` for a file of another format or version, `E_ARG` naming the
   *   bad field.
   */
  load(directory: PolicyDirectory): Promise<P>;
  /**
   * Frees what {@link LearnedParameters.load} holds outside the JS heap (e.g. a gate's weights on
   * the tensor backend), once the parameters are no longer used. Absent: nothing to free.
   */
  release?(parameters: P): void;
}

/**
 * A policy plugin: one name, a validated options schema with defaults, and a builder of the
 * policies for a budget and a context. Learned providers also read their parameters from a
 * directory. Every policy package exports its providers; a `PolicyRegistry` built from a list of
 * them serves the CLI, sweeps, the main job, servers and the shared test matrix, so adding a
 * policy to the project is adding its provider to that list.
 *
 * @typeParam S The options schema (a valibot `strictObject` whose entries carry their defaults,
 *   e.g. `v.optional(v.number(), 5)`, and descriptions, `v.pipe(…, v.description('…'))`).
 * @typeParam P The learned parameters (`undefined` for a heuristic).
 *
 * @example
 * ```ts
 * import * as v from 'valibot';
 * const newest: PolicyProvider<typeof schema> = {
 *   name: 'newest',
 *   summary: 'keeps the most recent entries',
 *   options: schema, // v.strictObject({})
 *   build: ({ budget }) => ({ eviction: new NewestFirst({ budget }) }),
 * };
 * ```
 */
export interface PolicyProvider<
  S extends PolicyOptionsSchema = PolicyOptionsSchema,
  P = undefined,
> {
  /** Registry name: lower-case letters, digits, `.`, `_`, `-`. */
  readonly name: string;
  /** One line saying what the policy is (shown by `lethe policies`). */
  readonly summary: string;
  /** The options schema. */
  readonly options: S;
  /** Present for learned providers: how to load trained parameters. */
  readonly learned?: LearnedParameters<P>;
  /**
   * The budget forms {@link PolicyProvider.build} takes (default {@link MEMORY_BUDGET_FORMS}:
   * capacity and rate); a compute policy takes `['compute']`, a read selector `['read']`.
   */
  readonly budgetForms?: readonly BudgetForm[];
  /**
   * Builds the policies for one batch.
   *
   * @throws LetheError `E_BUDGET` when the budget cannot be met with these options (e.g. anchors
   *   larger than the capacity), `E_ARG` naming the option otherwise.
   */
  build(request: PolicyBuildRequest<InferOutput<S>, P>): PolicySet;
}

/** Any provider, whatever its schema and parameters (what a registry holds). */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds providers of every parameter type.
export type AnyPolicyProvider = PolicyProvider<PolicyOptionsSchema, any>;

/** The validated options of a provider. */
export type ProviderOptions<T extends AnyPolicyProvider> = InferOutput<T['options']>;
