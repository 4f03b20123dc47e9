import type { NgcProgress } from '@lethe/policies-ngc/train';
import cliProgress from 'cli-progress';

/** A progress bar on stderr: step, eviction rate, reward, accuracy, gradient norm, peak, ETA. */
export function trainingBar(total: number): {
  update: (p: NgcProgress) => void;
  stop: () => void;
} {
  const bar = new cliProgress.SingleBar(
    {
      format:
        'ngc [{bar}] {value}/{total} | ε {rate} | reward {reward} | acc {acc} | |g| {grad} | peak {peak} | {sec}s/step | ETA {remaining}s',
      hideCursor: true,
      // Outside a terminal (CI logs, nohup) print a line every 10 s instead of redrawing.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, {
    rate: '-',
    reward: '-',
    acc: '-',
    grad: '-',
    peak: '-',
    sec: '-',
    remaining: '-',
  });
  return {
    update: (p) =>
      bar.update(p.step, {
        rate: p.evictionRate.toFixed(2),
        reward: p.reward.toFixed(3),
        acc: p.accuracy.toFixed(3),
        grad: p.gradNorm.toFixed(2),
        peak: p.peakEntries.toFixed(0),
        sec: p.seconds.toFixed(1),
        // `eta` is cli-progress's own token (its estimate from this session's bar), hence another name.
        remaining: p.etaSeconds.toFixed(0),
      }),
    stop: () => bar.stop(),
  };
}
