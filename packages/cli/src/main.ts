// The `lethe` command line: pretrain, policies, eval, report, generate. Built into dist/cli.js (ESM,
// with a shebang) and installed as the package's `lethe` binary.
import { Command } from 'commander';
import { addEvalCommand } from './eval-command';
import { addGenerateCommand } from './generate-command';
import { addPoliciesCommand } from './policies-command';
import { addPretrainCommand } from './pretrain-command';
import { addReportCommand } from './report-command';
import { reportFailure } from './report-failure';
import { addWorkerCommand } from './worker-command';

/** The `lethe` program with its five subcommands; commander errors throw instead of exiting. */
function createProgram(): Command {
  const program = new Command('lethe')
    .description(
      'Lethe: learned KV-cache memory management. Train tiny task models, evaluate eviction ' +
        'policies on them, write reports, and watch what a policy keeps while generating.',
    )
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
  addPretrainCommand(program);
  addPoliciesCommand(program);
  addEvalCommand(program);
  addReportCommand(program);
  addGenerateCommand(program);
  addWorkerCommand(program);
  return program;
}

// `pnpm lethe -- --flag` forwards the `--` separator; drop it so the flags still parse.
const argv = process.argv.filter((arg, i) => !(i === 2 && arg === '--'));
createProgram()
  .parseAsync(argv)
  .catch((error: unknown) => {
    process.exitCode = reportFailure(error, process.stderr);
  });
