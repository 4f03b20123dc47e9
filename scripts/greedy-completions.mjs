// The greedy completions of a model directory for task examples, from the built `lethe
// generate` (one JSON line per prompt): what the diagnosis scripts read. After `npm run build`.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The greedy completion text of each of `examples` by the model in `dir`, in order, at most
 * `maxNewTokens` tokens each. On a failed run it prints the CLI's errors and exits with its status.
 */
export function greedyCompletions(dir, examples, maxNewTokens) {
  const generated = spawnSync(
    process.execPath,
    [
      join(import.meta.dirname, '..', 'packages', 'cli', 'dist', 'cli.js'),
      'generate',
      '--model',
      dir,
      '--json',
      '--tokens',
      String(maxNewTokens),
    ],
    {
      input: `${examples.map((e) => e.prompt.replaceAll('\n', '\\n')).join('\n')}\n`,
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    },
  );
  if (generated.status !== 0) {
    process.stderr.write(generated.stderr);
    process.exit(generated.status ?? 1);
  }
  return generated.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).text);
}
