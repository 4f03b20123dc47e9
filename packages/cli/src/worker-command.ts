import { parseIntegerFlag } from '@lethe/eval';
import type { Command } from 'commander';
import { nameFlag } from './flag-errors';

/**
 * The kinds of item `lethe worker` computes, each with the module its threads run. Imported here,
 * not at the top: the trainers' entries load only for `lethe worker`, not for every command.
 */
export async function workerKinds(): Promise<Record<string, URL>> {
  const [evalNode, namm, ngc, sol] = await Promise.all([
    import('@lethe/eval/node'),
    import('@lethe/policies-namm/train/node'),
    import('@lethe/policies-ngc/train/node'),
    import('@lethe/policies-sol/train/node'),
  ]);
  return {
    [evalNode.SWEEP_CELL_KIND]: evalNode.sweepCellWorkerModule(),
    [namm.NAMM_MEMBER_KIND]: namm.nammMemberWorkerModule(),
    [ngc.NGC_ROLLOUTS_KIND]: ngc.ngcRolloutsWorkerModule(),
    [sol.SOL_ROLLOUTS_KIND]: sol.solRolloutsWorkerModule(),
  };
}

/**
 * Adds `lethe worker --redis <url>`: takes the items of Lethe's queued runs (the cells of
 * `lethe eval --redis`, the members of a NAMM generation, NGC and SOL rollouts) from Redis and computes them on `--threads` threads until Ctrl-C or
 * SIGTERM, which let the items in hand finish. A line on stderr per item; a run whose packages or
 * files differ from this installation's is refused (said once, on stderr) and left to others.
 */
export function addWorkerCommand(program: Command): void {
  program
    .command('worker')
    .summary(
      'compute queued items (lethe eval --redis, NAMM members, NGC and SOL rollouts) from Redis',
    )
    .description(
      'Take the items of queued runs from Redis (the cells of `lethe eval --redis`, the members ' +
        'of a NAMM generation, the rollouts of an NGC or SOL update) and compute ' +
        'them here, until Ctrl-C. Start it where the run was started, in a checkout of the same ' +
        'commit (or with the same files at the same paths), so the paths a run names resolve ' +
        'here to the same contents; a run whose files ' +
        'or package versions differ from this installation is refused and left to other workers.',
    )
    .requiredOption('--redis <url>', 'the Redis server, redis://host:port[/db]')
    .option('--threads <n>', 'items computed side by side, one a thread (default 1)')
    .option(
      '--lock-ms <n>',
      'how long a taken item stays locked without a renewal; a dead worker leaves its items to others after it (default 30000)',
    )
    .action(async (opts: { redis: string; threads?: string; lockMs?: string }) => {
      const threads =
        opts.threads === undefined ? 1 : parseIntegerFlag(opts.threads, '--threads', 1);
      const lockMs =
        opts.lockMs === undefined ? 30_000 : parseIntegerFlag(opts.lockMs, '--lock-ms', 1);
      const { startQueueWorker } = await import('@lethe/queue/node');
      const kinds = await workerKinds();
      let worker: ReturnType<typeof startQueueWorker>;
      try {
        worker = startQueueWorker({
          redis: opts.redis,
          kinds,
          threads,
          lockMs,
          onItem: ({ kind, job, ms }) => {
            process.stderr.write(`${kind} ${job}: ${(ms / 1000).toFixed(1)} s\n`);
          },
          onRefused: (error) => process.stderr.write(`lethe worker: ${error.message}\n`),
        });
      } catch (error) {
        throw nameFlag(error, (field) => (field === 'redis' ? '--redis' : undefined));
      }
      process.stderr.write(
        `lethe worker: taking ${Object.keys(kinds).join(', ')} items from ${opts.redis} on ${threads} thread(s); Ctrl-C stops after the items in hand\n`,
      );
      const stop = (): void => {
        process.stderr.write('lethe worker: stopping after the items in hand…\n');
        void worker.close();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await worker.done;
    });
}
