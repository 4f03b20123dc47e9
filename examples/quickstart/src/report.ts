import type { GenerationResult } from '@lethe/model';

/** Live/peak KV entries per layer (summed over KV heads) of the first sequence, as text. */
export function formatCacheLine(result: GenerationResult): string {
  const stats = result.stats.caches[0]!;
  const layers = Array.from(
    stats.livePerLayer,
    (live, l) => `L${l} ${live}/${stats.peakPerLayer[l]}`,
  );
  const rounds = Array.from(stats.evictionRounds).reduce((a, b) => a + b, 0);
  return `live/peak KV entries per layer: ${layers.join('  ')}  | eviction rounds ${rounds}`;
}

/** One summary row: policy, tokens/s, peak entries and their ratio to the full cache. */
export function formatSummaryRow(
  name: string,
  result: GenerationResult,
  fullPeak: number | undefined,
): string {
  const peak = result.stats.caches[0]!.peakTotal;
  const ratio = fullPeak ? ` (${((100 * peak) / fullPeak).toFixed(0)}% of full)` : '';
  return `${name.padEnd(14)} ${result.stats.tokensPerSecond.toFixed(1).padStart(8)} tok/s   peak KV entries ${String(peak).padStart(6)}${ratio}`;
}
