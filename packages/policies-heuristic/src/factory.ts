import type { ScorerPolicy } from '@lethe/kv-cache';
import { LetheError } from '@lethe/tensor';
import { type H2OOptions, H2OPolicy } from './h2o';
import { type KeyDiffOptions, KeyDiffPolicy } from './keydiff';
import { type KNormOptions, KNormPolicy } from './knorm';
import { L2NormPolicy } from './l2-norm';
import { type RandomOptions, RandomPolicy } from './random';
import { type SnapKVOptions, SnapKVPolicy } from './snapkv';
import { type StreamingLLMOptions, StreamingLLMPolicy } from './streaming-llm';
import { type TOVAOptions, TOVAPolicy } from './tova';

/** Options each heuristic eviction policy accepts, by name. */
export interface HeuristicOptionsByName {
  'streaming-llm': StreamingLLMOptions;
  h2o: H2OOptions;
  snapkv: SnapKVOptions;
  tova: TOVAOptions;
  knorm: KNormOptions;
  keydiff: KeyDiffOptions;
  l2norm: KNormOptions;
  random: RandomOptions;
}

/** Name of a heuristic eviction policy (Quest is a read selector: see `QuestSelector`). */
export type HeuristicName = keyof HeuristicOptionsByName;

/** Every heuristic eviction policy name, for CLIs and sweeps. */
export const HEURISTIC_NAMES: readonly HeuristicName[] = Object.freeze([
  'streaming-llm',
  'h2o',
  'snapkv',
  'tova',
  'knorm',
  'keydiff',
  'l2norm',
  'random',
]);

/** The class behind each name. */
const CONSTRUCTORS: {
  readonly [N in HeuristicName]: new (
    options: HeuristicOptionsByName[N],
  ) => ScorerPolicy;
} = {
  'streaming-llm': StreamingLLMPolicy,
  h2o: H2OPolicy,
  snapkv: SnapKVPolicy,
  tova: TOVAPolicy,
  knorm: KNormPolicy,
  keydiff: KeyDiffPolicy,
  l2norm: L2NormPolicy,
  random: RandomPolicy,
};

/** Option keys every scorer policy accepts. */
const SHARED_KEYS = [
  'budget',
  'trigger',
  'anchors',
  'granularity',
  'blockSize',
  'blockAggregation',
];

/** Method-specific option keys. */
const EXTRA_KEYS: Partial<Record<HeuristicName, readonly string[]>> = {
  h2o: ['statistic'],
  snapkv: ['windowSize', 'kernelSize'],
};

/**
 * Builds a heuristic eviction policy by name, e.g. from a CLI flag.
 *
 * @example
 * ```ts
 * const policy = createHeuristic('snapkv', { budget: { capacity: 256 }, windowSize: 32 });
 * ```
 * @throws LetheError `E_ARG` for an unknown name or an option the method does not take (so a
 * misspelt or misplaced option is not silently ignored), plus the policy's own validation errors.
 */
export function createHeuristic<N extends HeuristicName>(
  name: N,
  options: HeuristicOptionsByName[N],
): ScorerPolicy {
  if (!HEURISTIC_NAMES.includes(name)) {
    throw new LetheError(
      'E_ARG',
      `unknown heuristic "${name}"; one of ${HEURISTIC_NAMES.join(', ')}`,
      'name',
    );
  }
  const allowed = new Set([...SHARED_KEYS, ...(EXTRA_KEYS[name] ?? [])]);
  for (const key of Object.keys(options)) {
    if (!allowed.has(key))
      throw new LetheError('E_ARG', `not an option of "${name}"`, `options.${key}`);
  }
  const construct = CONSTRUCTORS[name] as new (options: HeuristicOptionsByName[N]) => ScorerPolicy;
  return new construct(options);
}
