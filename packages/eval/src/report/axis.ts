/** An axis: its domain, the ticks inside it with their labels, and whether it is logarithmic. */
export interface Axis {
  readonly min: number;
  readonly max: number;
  readonly ticks: readonly number[];
  /** Tick labels, one per tick, without unit. */
  readonly labels: readonly string[];
  /** Whether values map to pixels through log₁₀ (then `min` > 0). */
  readonly log: boolean;
}

/** A spread (largest / smallest value) from which {@link wantsLog} picks a log scale. */
const LOG_SPREAD = 5;

/**
 * Whether `values` ask for a log scale: all positive and the largest at least {@link LOG_SPREAD}
 * times the smallest — as a budget sweep from 10% to the full cache, or perplexities from 1.9
 * to 120, where a linear axis squeezes the informative low end into a few pixels.
 */
export function wantsLog(values: readonly number[]): boolean {
  const low = Math.min(...values);
  return low > 0 && Math.max(...values) / low >= LOG_SPREAD;
}

/**
 * A linear axis covering `values` with about `count` ticks at multiples of 1, 2 or 5 × 10ᵏ.
 * The data extent is padded by 4% on each side (not below 0 when `fromZero` is set, in which
 * case the axis starts at 0; not past `bounds`) and then widened to whole ticks; a single
 * value gets a ±10% span (0 to 1 for 0).
 */
export function niceAxis(
  values: readonly number[],
  {
    fromZero = false,
    count = 5,
    bounds,
  }: { fromZero?: boolean; count?: number; bounds?: readonly [number, number] } = {},
): Axis {
  let low = Math.min(...values, ...(fromZero ? [0] : []));
  let high = Math.max(...values);
  if (low === high) {
    const pad = low === 0 ? 1 : Math.abs(low) * 0.1;
    high += pad;
    if (!fromZero || low !== 0) low -= pad;
  } else {
    const pad = (high - low) * 0.04;
    high += pad;
    if (!(fromZero && low === 0)) low -= pad;
  }
  if (bounds !== undefined) {
    low = Math.max(low, bounds[0]);
    high = Math.min(high, bounds[1]);
  }
  const step = niceStep((high - low) / count);
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const first = Math.floor(low / step + 1e-9);
  const last = Math.ceil(high / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toFixed(decimals)));
  return {
    min: ticks[0]!,
    max: ticks[ticks.length - 1]!,
    ticks,
    labels: ticks.map((tick) => tick.toFixed(decimals)),
    log: false,
  };
}

/** Tick mantissas of a log axis, from sparse to dense: the first that gives ≥ 3 ticks is used (else the densest). */
const LOG_MANTISSAS = [
  [1, 2, 5],
  [1, 2, 3, 5],
  [1, 2, 3, 4, 5, 6, 7, 8, 9],
] as const;

/**
 * A log₁₀ axis covering positive `values`, padded by 8% of its log range on each side (a
 * factor of at least 1.05), with ticks at 1, 2, 5 × 10ᵏ — or 1, 2, 3, 5 × 10ᵏ, or every
 * integer multiple, when the range holds fewer than three of those.
 */
export function logAxis(values: readonly number[]): Axis {
  const low = Math.min(...values);
  const high = Math.max(...values);
  const pad = Math.max(1.05, (high / low) ** 0.08);
  const min = low / pad;
  const max = high * pad;
  let ticks: number[] = [];
  for (const mantissas of LOG_MANTISSAS) {
    ticks = [];
    for (let power = Math.floor(Math.log10(min)); power <= Math.ceil(Math.log10(max)); power++) {
      for (const m of mantissas) {
        const tick = Number((m * 10 ** power).toPrecision(12));
        if (tick >= min && tick <= max) ticks.push(tick);
      }
    }
    if (ticks.length >= 3) break;
  }
  return { min, max, ticks, labels: ticks.map(logTickLabel), log: true };
}

/** Maps `value` in `axis` onto the pixel interval [from, to] (through log₁₀ on a log axis). */
export function scale(axis: Axis, value: number, from: number, to: number): number {
  const at = (v: number) => (axis.log ? Math.log10(v) : v);
  return from + ((at(value) - at(axis.min)) / (at(axis.max) - at(axis.min))) * (to - from);
}

function logTickLabel(tick: number): string {
  return tick >= 10_000 ? tick.toExponential(0).replace('e+', 'e') : String(tick);
}

function niceStep(raw: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalised = raw / magnitude;
  const factor = normalised <= 1 ? 1 : normalised <= 2 ? 2 : normalised <= 5 ? 5 : 10;
  return factor * magnitude;
}
