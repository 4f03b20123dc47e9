import {
  type AnyPolicyProvider,
  anchoredEntryBound,
  type BudgetForm,
  budgetForm,
  type ComputeTargets,
  type EvictionPolicy,
  FULL_CACHE,
  MEMORY_BUDGET_FORMS,
  type PolicyBudget,
  type PolicyDirectory,
  type PolicyManifest,
  type PolicyModelShape,
  PolicyRegistry,
  type PreparedPolicy,
  type RateBudget,
  shareRoundedUp,
} from '@lethe/kv-cache';
import { DEFAULT_PROVIDERS } from '@lethe/policies';
import { encodeGsaParameters, initGateParameters } from '@lethe/policies-gsa';
import {
  encodeNammParameters,
  identityNormalization,
  scorerParameterCount,
} from '@lethe/policies-namm';
import {
  ACTION_PRESETS,
  ActionSet,
  controllerConfig,
  encodeSolPolicy,
  initControllerParameters,
} from '@lethe/policies-sol';
import { Rng } from '@lethe/tensor';

/**
 * A mode of the matrix: options every provider whose schema has all their keys is run with
 * (kvpress's `default_presses.py` pairs each press with its kwargs the same way). `slack` is the
 * excess over the capacity those options declare: a cadence of n lets a head grow n − 1 past it.
 */
export interface MatrixMode {
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
  /** A rate schedule instead of the loop's capacity (see {@link modeBudget}). */
  readonly rate?: RateBudget;
  /** Compute targets instead of a memory budget: a compute policy's mode. */
  readonly compute?: ComputeTargets;
  readonly slack: number;
  /** AdaKV shares a layer's budget across heads: the bound holds per layer, not per head. */
  readonly perLayerBound: boolean;
}

/** Compute targets of the compute modes: every axis below 1, so every knob is asked for. */
const COMPUTE_TARGETS: ComputeTargets = { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 };

/** Cadence of the decode-time trigger mode. */
const CADENCE = 4;

/**
 * The modes: per head, per layer, blocks, AdaKV, a decode-time trigger, threshold selection, a
 * rate schedule, the defaults.
 */
export const MATRIX_MODES: readonly MatrixMode[] = [
  { name: 'per-head', options: { granularity: 'head' }, slack: 0, perLayerBound: false },
  { name: 'per-layer', options: { granularity: 'layer' }, slack: 0, perLayerBound: false },
  { name: 'block', options: { blockSize: 2 }, slack: 0, perLayerBound: false },
  {
    name: 'adakv',
    options: { adakv: true, granularity: 'head' },
    slack: 0,
    perLayerBound: true,
  },
  {
    name: 'decode-trigger',
    options: { cadence: CADENCE },
    slack: CADENCE - 1,
    perLayerBound: false,
  },
  { name: 'threshold', options: { threshold: 0 }, slack: 0, perLayerBound: false },
  {
    name: 'rate-schedule',
    options: {},
    rate: { keepRatio: 0.5, every: 4 },
    slack: 0,
    perLayerBound: false,
  },
  { name: 'defaults', options: {}, slack: 0, perLayerBound: false },
  ...computeModes(),
];

/**
 * The compute-policy modes (SOL): the defaults, sampled actions, no KV refresh, short episodes
 * (several refreshes in a run), each under {@link COMPUTE_TARGETS}.
 */
function computeModes(): MatrixMode[] {
  const modes: [string, Record<string, unknown>][] = [
    ['compute-defaults', {}],
    ['compute-sampled', { sampling: { temperature: 1.3 } }],
    ['compute-no-refresh', { refresh: false }],
    ['compute-short-episodes', { horizon: 3 }],
  ];
  return modes.map(([name, options]) => ({
    name,
    options,
    compute: COMPUTE_TARGETS,
    slack: 0,
    perLayerBound: false,
  }));
}

/** The budget a loop of capacity `capacity` builds `mode`'s policies for. */
export function modeBudget(mode: MatrixMode, capacity: number): PolicyBudget {
  if (mode.compute !== undefined) return { targets: mode.compute };
  return mode.rate ?? { capacity };
}

/**
 * The most entries a KV head may hold under `mode`: `capacity + slack`, or under a rate schedule
 * the steady state of "grow by `every`, then keep ⌈keepRatio · live⌉" — raised to the policy's
 * anchors and allowing two blocks of rounding for block policies — plus the `every` tokens
 * before the next round. A policy that ignores the rate grows past it.
 */
export function modeBound(mode: MatrixMode, capacity: number, policy: EvictionPolicy): number {
  if (mode.rate === undefined) return capacity + mode.slack;
  const { keepRatio, every } = mode.rate;
  const block = (policy as { readonly blockSize?: number }).blockSize ?? 1;
  const anchors = anchoredEntryBound(policy.anchors, block > 1 ? block : undefined);
  let live = 0;
  let most = 0;
  for (let round = 0; round < 1000; round++) {
    most = Math.max(most, live + every);
    live = Math.max(anchors, shareRoundedUp(keepRatio, live + every) + 2 * (block - 1));
  }
  return most;
}

/** A learned provider's test directory: its manifest fields and the files beside it. */
export interface LearnedFixture {
  readonly manifest: Partial<PolicyManifest>;
  readonly files?: Readonly<Record<string, Uint8Array>>;
}

/** A NAMM whose BAM scorer has small seeded weights (not the zero genome, which keeps everything). */
function nammFixture(): LearnedFixture {
  const scorer = { kind: 'bam', features: 25, hidden: 8 } as const;
  const random = new Rng(5);
  const encoded = encodeNammParameters({
    scorer,
    features: 'spectrogram',
    genome: Float64Array.from(random.normal(scorerParameterCount(scorer)), (x) => 0.3 * x),
    normalization: identityNormalization(),
  });
  return {
    manifest: { options: {}, parameters: encoded.parameters },
    files: { [encoded.parameters.tensors]: encoded.tensors },
  };
}

/**
 * A per-KV-head GSA gate for `shape` with random weights and biases around g ≈ ½ (so the gates
 * differ between tokens and heads), one sink and a window of 2 (the loops' capacities are 8–12).
 */
function gsaFixture(shape: PolicyModelShape): LearnedFixture {
  const gate = initGateParameters(shape, 'head', { seed: 9, scale: 0.8 });
  const encoded = encodeGsaParameters(gate);
  return {
    manifest: { options: { sinks: 1, window: 2 }, parameters: { ...encoded.parameters } },
    files: { [encoded.parameters.tensors]: encoded.tensors },
  };
}

/**
 * A SOL controller for `shape` over the 2L action set: random weights with the policy head scaled
 * up so that actions differ between steps (a fresh controller's policy is near uniform), a small
 * width to keep the matrix fast.
 */
function solFixture(shape: PolicyModelShape): LearnedFixture {
  const actions = new ActionSet(ACTION_PRESETS['2L']);
  const config = controllerConfig({
    inputSize: shape.hiddenSize,
    actions: actions.size,
    width: 16,
    maxHorizon: 16,
  });
  const parameters = initControllerParameters(config, { seed: 4 });
  const head = parameters.tensors['policy_head.weight'];
  for (let i = 0; i < head.length; i++) head[i]! *= 300;
  const encoded = encodeSolPolicy({
    parameters,
    actions,
    baseModel: { hiddenSize: shape.hiddenSize, vocabSize: shape.vocabSize ?? 1 },
  });
  return {
    manifest: { options: { horizon: 8 }, parameters: { ...encoded.parameters } },
    files: { [encoded.parameters.tensors]: encoded.tensors },
  };
}

/**
 * The trained options (and files) of each learned provider's test directory, for the model shape
 * a loop runs (a gate is sized by it). A learned provider without one fails the matrix (it must
 * not be skipped silently).
 */
export const LEARNED_FIXTURES: Readonly<
  Record<string, (shape: PolicyModelShape) => LearnedFixture>
> = {
  ngc: () => ({ manifest: { options: { blockSize: 2, window: 2 }, model: '.' } }),
  namm: () => nammFixture(),
  gsa: gsaFixture,
  sol: solFixture,
};

/** The providers the matrix covers: every registered one but the full cache. */
export const MATRIX_PROVIDERS: readonly AnyPolicyProvider[] = DEFAULT_PROVIDERS.filter(
  (p) => p.name !== FULL_CACHE,
);

/** The budget form of `mode`'s budget. */
export function modeForm(mode: MatrixMode): BudgetForm {
  return budgetForm(modeBudget(mode, 2));
}

/** Whether `provider` builds compute policies (its budgets are compute targets). */
export function isComputeProvider(provider: AnyPolicyProvider): boolean {
  return (provider.budgetForms ?? MEMORY_BUDGET_FORMS).includes('compute');
}

/** Whether `provider` takes `mode`'s budget form and its schema every option of `mode`. */
export function accepts(provider: AnyPolicyProvider, mode: MatrixMode): boolean {
  return (
    (provider.budgetForms ?? MEMORY_BUDGET_FORMS).includes(modeForm(mode)) &&
    Object.keys(mode.options).every((key) => key in provider.options.entries)
  );
}

/** Every applicable (provider, mode) pair, in order. */
export function matrixCases(): { provider: AnyPolicyProvider; mode: MatrixMode }[] {
  return MATRIX_PROVIDERS.flatMap((provider) =>
    MATRIX_MODES.filter((mode) => accepts(provider, mode)).map((mode) => ({ provider, mode })),
  );
}

/** An in-memory policy directory holding `fixture` for `provider`. */
function memoryDirectory(provider: string, fixture: LearnedFixture): PolicyDirectory {
  const { manifest, files = {} } = fixture;
  return {
    files: {
      location: `memory:${provider}`,
      readText: async () => '',
      readBytes: async (name) => {
        const bytes = files[name];
        if (bytes === undefined) throw new Error(`memory:${provider} has no file ${name}`);
        return bytes;
      },
    },
    manifest: {
      format: 'lethe-policy',
      version: 1,
      provider,
      options: {},
      ...manifest,
    } as PolicyManifest,
  };
}

const registry = new PolicyRegistry(MATRIX_PROVIDERS);

/**
 * Prepares `provider` in `mode` for a model of `shape` (a learned one from its fixture directory).
 *
 * @throws Error when a learned provider has no fixture in {@link LEARNED_FIXTURES}.
 */
export async function prepareCase(
  provider: AnyPolicyProvider,
  mode: MatrixMode,
  shape: PolicyModelShape,
): Promise<PreparedPolicy> {
  let directory: PolicyDirectory | undefined;
  if (provider.learned !== undefined) {
    const fixture = LEARNED_FIXTURES[provider.name];
    if (fixture === undefined) {
      throw new Error(`learned provider "${provider.name}" has no fixture in LEARNED_FIXTURES`);
    }
    directory = memoryDirectory(provider.name, fixture(shape));
  }
  return registry.prepare(provider.name, { options: mode.options, directory });
}
