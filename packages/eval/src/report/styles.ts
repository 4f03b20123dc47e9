import { FULL_CACHE } from '@lethe/kv-cache';
import { MARKER_SHAPES, type MarkerShape, type SeriesStyle } from './markers';

/**
 * Ten colours of distinct hue (matplotlib's `tab10`): no two blues or two oranges, so a reader
 * can tell ten policies apart by colour alone, and by marker alone (see {@link policyStyles}).
 */
const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
] as const;

/** Markers of the policies, in order: the circle is the full cache's, so it comes last. */
const POLICY_MARKERS: readonly MarkerShape[] = [...MARKER_SHAPES.slice(1), 'circle'];
/** Dash patterns that tell apart policies once colours and markers wrap (more than ten). */
const DASHES = ['none', '6 3', '2 3'] as const;
/** The full cache: a black dashed reference with circles. */
const FULL_CACHE_STYLE: SeriesStyle = { color: '#000000', dash: '6 4', marker: 'circle' };

/**
 * A style per policy, fixed across every chart of a report: the full cache is black, dashed,
 * with circles; the others, in `policies` order: policy `i = 10a + b` takes colour `b` and marker
 * `(a + b) mod 10` — a distinct colour *and* marker for each of the first ten, and a distinct
 * (colour, marker) pair for each of the first hundred (the eleventh shares the first's colour,
 * never its marker) — and past ten a dash pattern too.
 */
export function policyStyles(policies: readonly string[]): Map<string, SeriesStyle> {
  const styles = new Map<string, SeriesStyle>();
  let next = 0;
  for (const policy of policies) {
    if (styles.has(policy)) continue;
    if (policy === FULL_CACHE) {
      styles.set(policy, FULL_CACHE_STYLE);
      continue;
    }
    const round = Math.floor(next / PALETTE.length);
    styles.set(policy, {
      color: PALETTE[next % PALETTE.length]!,
      marker: POLICY_MARKERS[(next + round) % POLICY_MARKERS.length]!,
      dash: DASHES[round % DASHES.length]!,
    });
    next += 1;
  }
  return styles;
}
