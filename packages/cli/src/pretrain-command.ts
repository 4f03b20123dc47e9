import { rm } from 'node:fs/promises';
import { parseIntegerFlag } from '@lethe/eval';
import { EXIT_INTERRUPTED } from '@lethe/eval/node';
import { type TaskModelProbe, trainingSeed } from '@lethe/task-models';
import {
  DEFAULT_CHECKPOINT_EVERY,
  PRETRAIN_FLAGS,
  parsePretrainFlags,
  pretrainFlagOf,
  pretrainTaskModel,
  resolvePretrainSettings,
} from '@lethe/task-models/node';
import { type BackendName, initBackend } from '@lethe/tensor';
import type { Command } from 'commander';
import { nameFlag } from './flag-errors';
import { interruptController } from './interrupt';
import { declareFlags, givenFlagArgs } from './option-args';
import { formatDuration, trainingBar } from './progress-bars';

/** The flag of a setting named in an error. */
function flagOf(field: string): string | undefined {
  return field === 'checkpointEvery' ? '--checkpoint-every' : pretrainFlagOf(field);
}

/**
 * Adds `lethe pretrain`: trains a tiny task model (`pretrainTaskModel`) with a progress bar
 * (step, loss, tokens/s, ETA), keeping a resumable training state in `--state-dir` (default
 * `<out>.state`, removed after success unless `--keep-state`); Ctrl-C stops after the current
 * update with the state saved, and the same command resumes.
 */
export function addPretrainCommand(program: Command): void {
  const command = program
    .command('pretrain')
    .summary('train a tiny task model')
    .description(
      'Train a tiny task model with the SFT trainer (from scratch, or from another task ' +
        "model's weights with --init) and save it as a task-model directory " +
        '(config.json, model.safetensors, tokenizer.json, and lethe-model.json with the ' +
        'command, seed and held-out full-cache score). Ctrl-C stops with the state saved; the ' +
        'same command resumes.',
    );
  declareFlags(command, PRETRAIN_FLAGS);
  command
    .option('--state-dir <dir>', 'resumable training state (default <out>.state)')
    .option(
      '--checkpoint-every <n>',
      `updates between state writes (default ${DEFAULT_CHECKPOINT_EVERY})`,
    )
    .option('--keep-state', 'keep the state directory after success')
    .action(async (opts: { stateDir?: string; checkpointEvery?: string; keepState?: boolean }) => {
      let parsed: ReturnType<typeof parsePretrainFlags>;
      let settings: ReturnType<typeof resolvePretrainSettings>['settings'];
      try {
        parsed = parsePretrainFlags(givenFlagArgs(command, PRETRAIN_FLAGS));
        settings = resolvePretrainSettings(parsed.options).settings;
      } catch (error) {
        throw nameFlag(error, flagOf);
      }
      const checkpointEvery =
        opts.checkpointEvery === undefined
          ? DEFAULT_CHECKPOINT_EVERY
          : parseIntegerFlag(opts.checkpointEvery, '--checkpoint-every', 1);
      const stateDir = opts.stateDir ?? `${settings.out}.state`;
      const backend = await initBackend((parsed.backend ?? 'wasm') as BackendName);
      const size = settings.modelSize;
      console.log(
        `pretrain ${settings.task}${Object.keys(settings.taskOptions).length > 0 ? ` ${JSON.stringify(settings.taskOptions)}` : ''}: ` +
          `${size.layers} layers, hidden ${size.hidden}, ${size.heads} query / ${size.kvHeads} KV heads, MLP ${size.intermediate}` +
          `${settings.init === undefined ? '' : ` from ${settings.init}`} | ` +
          `${settings.steps} steps × ${settings.batchSize} | seed ${settings.seed} (examples from task seed ${trainingSeed(settings.seed)}) | ${backend}`,
      );
      console.log(`state: ${stateDir} (rerun the same command to resume)`);
      const bar = trainingBar(settings.steps);
      const interrupt = interruptController(() => {
        process.stderr.write('\nstopping after this update (state is saved)…\n');
      });
      const started = performance.now();
      let result: Awaited<ReturnType<typeof pretrainTaskModel>>;
      try {
        result = await pretrainTaskModel({
          ...parsed.options,
          checkpointDir: stateDir,
          checkpointEvery,
          signal: interrupt.signal,
          onProgress: bar.update,
          onProbe: (probe) => bar.log(`validation at update ${probe.step}: ${probeLine(probe)}`),
          onPhase: (phase) => {
            if (phase === 'evaluate') {
              bar.stop();
              console.log(
                `evaluating the full cache on ${settings.evalExamples} held-out examples (seed ${settings.evalSeed})…`,
              );
            }
          },
        });
      } catch (error) {
        bar.stop();
        if (interrupt.interrupted()) {
          console.log(
            `interrupted during the held-out evaluation; the trained state is in ${stateDir}; run the same command to evaluate and save`,
          );
          process.exitCode = EXIT_INTERRUPTED;
          return;
        }
        throw nameFlag(error, flagOf);
      } finally {
        interrupt.dispose();
      }
      bar.stop();
      result.model.dispose();
      if (result.stopped) {
        console.log(
          `stopped at step ${result.step}/${settings.steps}; state in ${stateDir}; run the same command to resume`,
        );
        process.exitCode = EXIT_INTERRUPTED;
        return;
      }
      const manifest = result.manifest!;
      if (!opts.keepState) await rm(stateDir, { recursive: true, force: true });
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `saved ${settings.out} (${manifest.model.parameters.toLocaleString('en-US')} parameters, final loss ${manifest.training.finalLoss?.toFixed(4) ?? 'n/a'}, ${formatDuration(seconds)}; ${formatDuration(manifest.training.trainingSeconds)} of updates over every session of the run)`,
      );
      const evaluation = manifest.evaluation;
      if (evaluation !== null) {
        const score =
          evaluation.metric === 'accuracy'
            ? `${(100 * evaluation.mean).toFixed(1)}% ± ${(100 * evaluation.stderr).toFixed(1)}%`
            : `${evaluation.mean.toFixed(3)} ± ${evaluation.stderr.toFixed(3)}`;
        console.log(
          `full-cache ${evaluation.metric} on ${evaluation.examples} held-out examples (seed ${evaluation.seed}): ${score}`,
        );
        if (evaluation.members !== undefined) {
          const members = Object.entries(evaluation.members).map(
            ([member, { correct, total }]) =>
              `${member} ${correct}/${total} (${((100 * correct) / total).toFixed(1)}%)`,
          );
          console.log(`per member: ${members.join(', ')}`);
        }
        console.log(`reproduce: ${evaluation.command}`);
      }
      console.log(`recreate:  ${manifest.command}`);
    });
}

/** A validation score as one line: the score, then each suite member's tally. */
function probeLine(probe: TaskModelProbe): string {
  const score =
    probe.metric === 'accuracy'
      ? `${(100 * probe.mean).toFixed(1)}% ± ${(100 * probe.stderr).toFixed(1)}%`
      : `perplexity ${probe.mean.toFixed(3)} ± ${probe.stderr.toFixed(3)}`;
  const members = Object.entries(probe.members ?? {}).map(
    ([member, { correct, total }]) => `${member} ${correct}/${total}`,
  );
  return members.length === 0 ? score : `${score} (${members.join(', ')})`;
}
