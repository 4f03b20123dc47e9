/** A linear axis: its domain, evenly spaced "nice" ticks inside it and their label decimals. */
export interface Axis {
  readonly min: number;
  readonly max: number;
  readonly ticks: readonly number[];
  readonly decimals: number;
}

/**
 * A linear axis covering `values` with about `count` ticks at multiples of 1, 2 or 5 × 10ᵏ.
 * The data extent is padded by 4% on each side (not below 0 when `fromZero` is set, in which
 * case the axis starts at 0) and then widened to whole ticks; a single value gets a ±10% span
 * (0 to 1 for 0).
 */
export function niceAxis(values: readonly number[], { fromZero = false, count = 5 } = {}): Axis {
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
  const step = niceStep((high - low) / count);
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const first = Math.floor(low / step);
  const last = Math.ceil(high / step);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toFixed(decimals)));
  return { min: ticks[0]!, max: ticks[ticks.length - 1]!, ticks, decimals };
}

/** Maps `value` in `axis` linearly onto the pixel interval [from, to]. */
export function scale(axis: Axis, value: number, from: number, to: number): number {
  return from + ((value - axis.min) / (axis.max - axis.min)) * (to - from);
}

function niceStep(raw: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalised = raw / magnitude;
  const factor = normalised <= 1 ? 1 : normalised <= 2 ? 2 : normalised <= 5 ? 5 : 10;
  return factor * magnitude;
}
