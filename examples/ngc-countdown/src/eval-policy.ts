import type { EvictionPolicy } from '@lethe/kv-cache';
import {
  H2OPolicy,
  KeyDiffPolicy,
  KNormPolicy,
  SnapKVPolicy,
  StreamingLLMPolicy,
} from '@lethe/policies-heuristic';
import { NgcPolicy } from '@lethe/policies-ngc';
import { LetheError } from '@lethe/tensor';
import type { TrainSettings } from './train-settings';

/** The heuristics of the paper's Fig. 3 (§5.1), plus H2O, by name. */
const BASELINE_CLASSES = {
  'streaming-llm': StreamingLLMPolicy,
  h2o: H2OPolicy,
  snapkv: SnapKVPolicy,
  keydiff: KeyDiffPolicy,
  knorm: KNormPolicy,
} as const;

/** The names of the compared heuristics. */
export const BASELINE_HEURISTICS = Object.keys(
  BASELINE_CLASSES,
) as readonly (keyof typeof BASELINE_CLASSES)[];

/**
 * SnapKV's observation window in the comparison: the paper's w = 5 (§5.1). It is also the
 * `window` of the evaluation settings (files written before NGC's default became w = b = 2 resume).
 */
export const SNAPKV_WINDOW = 5;

/** The grow-then-evict schedule every method runs under in the comparison. */
export interface EvictionSchedule {
  /** Eviction rate ε per round. */
  readonly rate: number;
  /** Cadence δ. */
  readonly cadence: number;
  /** NGC's block size b and scoring window w (SnapKV observes the same window). */
  readonly blockSize: number;
  readonly window: number;
}

/**
 * The eviction policy of `method` under `schedule`: NGC greedy (evaluation mode, §5.1), or a
 * heuristic that keeps ⌈(1 − ε)·live⌉ entries per KV head every δ tokens — the same rounds and
 * the same fraction, so the comparison isolates *what* is kept. SnapKV observes NGC's window
 * (its default 64 would protect more than a whole round's cache here).
 */
export function evalPolicy(method: string, schedule: EvictionSchedule): EvictionPolicy {
  const { rate, cadence, blockSize, window } = schedule;
  if (method === 'ngc') {
    return new NgcPolicy({ evictionRate: rate, cadence, blockSize, window, mode: 'greedy' });
  }
  const shared = { budget: { keepRatio: 1 - rate }, trigger: { every: cadence } };
  if (method === 'snapkv') return new SnapKVPolicy({ ...shared, windowSize: window });
  const heuristic = BASELINE_CLASSES[method as keyof typeof BASELINE_CLASSES];
  if (heuristic === undefined) {
    throw new LetheError(
      'E_ARG',
      `unknown method "${method}"; one of ngc, ${BASELINE_HEURISTICS.join(', ')}`,
      'method',
    );
  }
  return new heuristic(shared);
}

/**
 * The block size and window an NGC run is evaluated with: those it was trained with (its
 * recorded `settings`), once its cadence is checked against the evaluation's.
 *
 * @throws LetheError `E_ARG` naming `source` when the run was trained with another cadence.
 */
export function trainedNgcShape(
  settings: Pick<TrainSettings, 'cadence' | 'blockSize' | 'window'>,
  cadence: number,
  source: string,
): { blockSize: number; window: number } {
  if (settings.cadence !== cadence) {
    throw new LetheError(
      'E_ARG',
      `was trained with cadence ${settings.cadence}; every method here evicts every ${cadence} tokens`,
      source,
    );
  }
  return { blockSize: settings.blockSize, window: settings.window };
}
