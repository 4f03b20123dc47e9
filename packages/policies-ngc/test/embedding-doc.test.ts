import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/embedding.md's NGC example, run as written by a bare `node` from this package's directory
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
  it('the NGC example keeps whole blocks, the same in both heads, round after round', () => {
    const match = /^(\d+) rounds; kept (.*)$/.exec(runExampleAfter('### NGC').trim());
    expect(match).not.toBeNull();
    // 32 tokens, a round every 8.
    expect(Number(match![1])).toBe(4);
    const heads = match![2]!.split(' | ').map((head) => head.split(' ').map(Number));
    expect(heads).toHaveLength(2);
    expect(heads[1]).toEqual(heads[0]);
    // 16 rows = 4 blocks of 4 before the last round; ε = 0.5 keeps 2 of them, whole.
    const rows = heads[0]!;
    expect(rows).toHaveLength(8);
    for (let b = 0; b < rows.length; b += 4) {
      expect(rows[b]! % 4).toBe(0);
      expect(rows.slice(b, b + 4)).toEqual([0, 1, 2, 3].map((i) => rows[b]! + i));
    }
  });
});
