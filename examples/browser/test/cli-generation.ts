import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository's root, ending in `/`. */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const LETHE = `${REPO}packages/cli/bin/lethe.mjs`;

/** What `lethe generate --json` printed for one prompt (the fields the page is compared on). */
export interface CliGeneration {
  readonly text: string;
  readonly livePerHead: number[][];
  readonly finishReason: string;
}

/**
 * Runs `lethe generate --json` in Node on `model` (a model directory, relative to the
 * repository), the policy (with its policy directory, relative to the repository, for a learned
 * one), budget, seed 0 and greedy sampling, on `prompt` (escaped as `--prompt` reads it: `\\`
 * and `\n`).
 */
export async function cliGeneration(options: {
  readonly model: string;
  readonly policy: string;
  readonly budget: number;
  readonly policyDir?: string;
  readonly policyOptions?: string;
  readonly prompt: string;
  /** `--tokens` (default: the task's allowance). */
  readonly tokens?: number;
}): Promise<CliGeneration> {
  const args = [
    LETHE,
    'generate',
    '--json',
    '--model',
    `${REPO}${options.model}`,
    '--policy',
    options.policy,
    '--budget',
    String(options.budget),
    '--prompt',
    options.prompt.replaceAll('\\', '\\\\').replaceAll('\n', '\\n'),
  ];
  if (options.policyDir !== undefined) args.push('--policy-dir', `${REPO}${options.policyDir}`);
  if (options.policyOptions !== undefined) args.push('--policy-options', options.policyOptions);
  if (options.tokens !== undefined) args.push('--tokens', String(options.tokens));
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 24 });
  const lines = stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`lethe generate --json printed ${lines.length} lines`);
  return JSON.parse(lines[0]!) as CliGeneration;
}
