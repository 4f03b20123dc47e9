import type { SweepProgress } from '@lethe/eval';
import type { TrainProgress } from '@lethe/model';
import cliProgress from 'cli-progress';

/** `seconds` as `1h02m`, `3m05s` or `12s`; `?` when unknown. */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A progress bar on stderr that redraws on a terminal and prints a line every 10 s elsewhere. */
function bar(format: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    {
      format,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 10_000,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
}

/** A training bar: step, loss, tokens/s and ETA. */
export function trainingBar(totalSteps: number): {
  update: (progress: TrainProgress) => void;
  /** Prints a line above the bar (the bar redraws at its next update). */
  log: (line: string) => void;
  stop: () => void;
} {
  const b = bar(
    'pretrain [{bar}] {value}/{total} steps | loss {loss} | {tps} tok/s | ETA {remaining}',
  );
  b.start(totalSteps, 0, { loss: '-', tps: '-', remaining: '?' });
  return {
    update: (p) =>
      b.update(p.step, {
        loss: p.loss.toFixed(3),
        tps: p.tokensPerSecond.toFixed(0),
        remaining: formatDuration(p.etaSeconds),
      }),
    log: (line) => {
      process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[2K' : ''}${line}\n`);
    },
    stop: () => b.stop(),
  };
}

/** A sweep bar: cells done, the last cell, and the harness's ETA. */
export function sweepBar(totalCells: number): {
  update: (progress: SweepProgress) => void;
  stop: () => void;
} {
  const b = bar('eval [{bar}] {value}/{total} cells | {cell} | ETA {remaining}');
  b.start(totalCells, 0, { cell: 'starting', remaining: '?' });
  return {
    update: (p) => {
      const { task, policy, budget, seed } = p.key;
      b.update(p.index + 1, {
        cell: `${task} ${policy} ${budget} seed ${seed}${p.skipped ? ' (done before)' : ''}`,
        remaining: formatDuration(p.etaMs === undefined ? undefined : p.etaMs / 1000),
      });
    },
    stop: () => b.stop(),
  };
}
