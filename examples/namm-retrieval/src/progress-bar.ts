import type { NammProgress } from '@lethe/policies-namm/train';
import cliProgress from 'cli-progress';

/** A progress bar on stderr: generation, best and mean fitness, relative cache size, ETA. */
export function evolutionBar(total: number): {
  update: (p: NammProgress) => void;
  stop: () => void;
} {
  const bar = new cliProgress.SingleBar(
    {
      format:
        'namm [{bar}] {value}/{total} generations | best {best} | mean {mean} | cache {cache} | {sec}s/gen | ETA {remaining}s',
      hideCursor: true,
      // Outside a terminal (CI logs, nohup) print a line every 10 s instead of redrawing.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { best: '-', mean: '-', cache: '-', sec: '-', remaining: '-' });
  return {
    update: (p) =>
      bar.update(p.generation, {
        best: p.bestFitness.toFixed(3),
        mean: p.meanFitness.toFixed(3),
        cache: p.cacheSize.toFixed(3),
        sec: p.seconds.toFixed(1),
        // `eta` is cli-progress's own token (its estimate from this session's bar), hence another name.
        remaining: p.etaSeconds.toFixed(0),
      }),
    stop: () => bar.stop(),
  };
}
