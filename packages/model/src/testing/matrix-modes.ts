import {
  type AnyPolicyProvider,
  anchoredEntryBound,
  type BudgetForm,
  budgetForm,
  type ComputeTargets,
  type EvictionPolicy,
  MEMORY_BUDGET_FORMS,
  type PolicyBudget,
  type RateBudget,
  type ReadBudget,
  shareRoundedUp,
} from '@lethe/kv-cache';

/**
 * A mode of the policy matrix: options every provider whose schema has all their keys is run with
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
  /**
   * A read budget instead of a memory budget: a read selector's mode. Its page budget is
   * {@link modeReadPages}.
   */
  readonly read?: ReadBudget;
  readonly slack: number;
  /** AdaKV shares a layer's budget across heads: the bound holds per layer, not per head. */
  readonly perLayerBound: boolean;
}

/** Compute targets of the compute modes: every axis below 1, so every knob is asked for. */
const COMPUTE_TARGETS: ComputeTargets = { tokenKeep: 0.5, mlpInputKeep: 0.8, precision: 0.6 };

/** Cadence of the decode-time trigger mode. */
const CADENCE = 4;

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

/**
 * Options of the read modes: pages of 2 entries (the `KVCache` loop's heads hold up to 30 of them,
 * `generate()`'s up to 18), one page at least (so the page budget is the read budget's), and no
 * dense leading layer (the matrix models have two layers).
 */
const READ_OPTIONS = { pageSize: 2, minPages: 1, denseLayers: 0 };

/** Entries a KV head reads per decode step in the read modes: 3 pages of 2. */
const READ_TOKENS = 6;

/**
 * The read-selector modes (Quest): Quest's options made to select at the matrix's sizes, and the
 * same summing its GQA group's page bounds, each under a read budget of {@link READ_TOKENS}.
 */
function readModes(): MatrixMode[] {
  const modes: [string, Record<string, unknown>][] = [
    ['read-defaults', READ_OPTIONS],
    ['read-group-sum', { ...READ_OPTIONS, groupReduce: 'sum' }],
  ];
  return modes.map(([name, options]) => ({
    name,
    options,
    read: { readTokens: READ_TOKENS },
    slack: 0,
    perLayerBound: false,
  }));
}

/**
 * The modes: per head, per layer, blocks, AdaKV, a decode-time trigger, threshold selection, a
 * rate schedule, the defaults; the compute modes; the read modes.
 */
export const MATRIX_MODES: readonly MatrixMode[] = Object.freeze([
  { name: 'per-head', options: { granularity: 'head' }, slack: 0, perLayerBound: false },
  { name: 'per-layer', options: { granularity: 'layer' }, slack: 0, perLayerBound: false },
  { name: 'block', options: { blockSize: 2 }, slack: 0, perLayerBound: false },
  { name: 'adakv', options: { adakv: true, granularity: 'head' }, slack: 0, perLayerBound: true },
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
  ...readModes(),
]);

/** The budget a loop of capacity `capacity` builds `mode`'s policies for. */
export function modeBudget(mode: MatrixMode, capacity: number): PolicyBudget {
  if (mode.compute !== undefined) return { targets: mode.compute };
  if (mode.read !== undefined) return mode.read;
  return mode.rate ?? { capacity };
}

/**
 * The most pages of `pageSize` entries a KV head may read per decode step under a read `mode`:
 * Quest's page budget `max(minPages, floor(readTokens / pageSize))`, the newest page included,
 * with the mode's `minPages` option (1 when it sets none: a read takes the newest page at least).
 *
 * @throws Error for a mode without a read budget.
 */
export function modeReadPages(mode: MatrixMode, pageSize: number): number {
  if (mode.read === undefined) throw new Error(`mode "${mode.name}" has no read budget`);
  const { minPages } = mode.options;
  const least = typeof minPages === 'number' ? minPages : 1;
  return Math.max(least, Math.floor(mode.read.readTokens / pageSize));
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

/** The budget form of `mode`'s budget. */
export function modeForm(mode: MatrixMode): BudgetForm {
  return budgetForm(modeBudget(mode, 2));
}

/**
 * What a provider builds, by the budget forms it takes: a compute policy (compute targets), a
 * read selector (read budgets) or an eviction policy (memory budgets).
 */
export type ProviderKind = 'eviction' | 'compute' | 'read';

/** What `provider` builds (see {@link ProviderKind}). */
export function providerKind(provider: AnyPolicyProvider): ProviderKind {
  const forms = provider.budgetForms ?? MEMORY_BUDGET_FORMS;
  if (forms.includes('compute')) return 'compute';
  return forms.includes('read') ? 'read' : 'eviction';
}

/** What a provider run in `mode` builds: the kind whose budget form `mode`'s budget has. */
export function modeKind(mode: MatrixMode): ProviderKind {
  if (mode.compute !== undefined) return 'compute';
  return mode.read === undefined ? 'eviction' : 'read';
}

/** Whether `provider` takes `mode`'s budget form and its schema every option of `mode`. */
export function accepts(provider: AnyPolicyProvider, mode: MatrixMode): boolean {
  return (
    (provider.budgetForms ?? MEMORY_BUDGET_FORMS).includes(modeForm(mode)) &&
    Object.keys(mode.options).every((key) => key in provider.options.entries)
  );
}
