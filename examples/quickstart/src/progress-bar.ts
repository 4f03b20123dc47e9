import type { TrainProgress } from '@lethe/model';
import cliProgress from 'cli-progress';

/** A terminal progress bar for training: step, loss, tokens/s and ETA. */
export function trainingBar(total: number): {
  update: (p: TrainProgress) => void;
  stop: () => void;
} {
  const bar = new cliProgress.SingleBar(
    {
      format: 'train [{bar}] {value}/{total} loss {loss} | {tps} tok/s | ETA {eta}s',
      hideCursor: true,
      // Outside a terminal (CI logs) print a line every 10 s instead of redrawing.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { loss: '-', tps: '-' });
  return {
    update: (p) =>
      bar.update(p.step, { loss: p.loss.toFixed(3), tps: p.tokensPerSecond.toFixed(0) }),
    stop: () => bar.stop(),
  };
}
