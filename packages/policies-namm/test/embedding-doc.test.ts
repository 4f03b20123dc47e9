import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's NAMM example, run as written by a bare `node` from this package's directory
// (the built packages, as an embedding runtime loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = readFileSync(join(pkg, '../../docs/embedding.md'), 'utf8');

/** What the first ```js block after `heading` prints. */
function runExampleAfter(heading: string): string {
  const at = doc.indexOf(heading);
  const match = /```js\n([\s\S]*?)```/.exec(doc.slice(at));
  if (at < 0 || match === null) throw new Error(`no example under ${heading}`);
  const { NODE_OPTIONS: _, ...env } = process.env;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', match[1]!], {
    cwd: pkg,
    env,
    encoding: 'utf8',
  });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return child.stdout;
}

describe('docs/embedding.md', () => {
  it('the NAMM example reads every query once and keeps half of each head per round', () => {
    const lines = runExampleAfter('### NAMM').trim().split('\n');
    // A round every 16 tokens, each reading the 16 queries since the previous one; a rate of 0.5
    // keeps ⌈live / 2⌉: 16 → 8, 8 + 16 → 12, 12 + 16 → 14.
    expect(lines.slice(0, 3)).toEqual([
      'round at 16: 16 queries read, 8 rows kept',
      'round at 32: 16 queries read, 12 rows kept',
      'round at 48: 16 queries read, 14 rows kept',
    ]);
    expect(lines).toHaveLength(4);
    const heads = lines[3]!.split(' | ').map((head) => head.split(' ').map(Number));
    expect(heads).toHaveLength(2);
    for (const positions of heads) {
      expect(positions).toHaveLength(14);
      expect(positions.at(-1)).toBe(47); // the newest row, NAMM's one anchor
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    }
  });
});
