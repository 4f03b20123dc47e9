import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Runs the first ` ```js ` block after `heading` in the Markdown file `doc` as written, in a bare
 * `node` (an ES module, no vitest transforms, no `NODE_OPTIONS`) started in `cwd` — so the
 * packages it imports resolve to their built `dist`, as an embedding runtime loads them — and
 * returns what it printed.
 *
 * @throws Error when `doc` has no such heading or no ` ```js ` block after it, or when the example
 *   exits with another status than 0 or writes to stderr (with what it wrote).
 */
export function runDocExample(doc: URL | string, heading: string, cwd: string): string {
  const text = readFileSync(doc, 'utf8');
  const at = text.indexOf(heading);
  const match = at < 0 ? null : /```js\n([\s\S]*?)```/.exec(text.slice(at));
  if (match === null) throw new Error(`no js example under "${heading}" in ${String(doc)}`);
  const { NODE_OPTIONS: _, ...env } = process.env;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', match[1]!], {
    cwd,
    env,
    encoding: 'utf8',
  });
  if (child.status !== 0 || child.stderr !== '') {
    throw new Error(
      `the example under "${heading}" exited ${child.status} and wrote:\n${child.stderr}`,
    );
  }
  return child.stdout;
}
