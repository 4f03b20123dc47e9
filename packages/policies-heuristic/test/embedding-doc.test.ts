import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's adapter example, run as written by a bare `node` from this package's
// directory (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = readFileSync(join(pkg, '../../docs/embedding.md'), 'utf8');

/** The first ```js block after `heading`. */
function exampleAfter(heading: string): string {
  const section = doc.slice(doc.indexOf(heading));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (doc.indexOf(heading) < 0 || match === null) throw new Error(`no example under ${heading}`);
  return match[1]!;
}

describe('docs/embedding.md', () => {
  it('the one-function adapter example runs and keeps its budget and anchors', () => {
    const code = exampleAfter('### The one-function adapter');
    const { NODE_OPTIONS: _, ...env } = process.env;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: pkg,
      env,
      encoding: 'utf8',
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const heads = child.stdout
      .trim()
      .split(' | ')
      .map((head) => head.split(' ').map(Number));
    expect(heads).toHaveLength(2);
    for (const positions of heads) {
      // Capacity 7 per head after the last round (20 tokens, rounds past 7), sink 0, window 18–19.
      expect(positions).toHaveLength(7);
      expect(positions[0]).toBe(0);
      expect(positions.slice(-2)).toEqual([18, 19]);
    }
  });
});
