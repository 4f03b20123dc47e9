import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// The README's example, run as written by a bare `node` from this package's directory (the built
// packages, as a user's script loads them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('README', () => {
  it('pretrains a micro task model and loads it back', () => {
    const out = runDocExample(join(pkg, 'README.md'), '# @lethe/task-models', pkg);
    expect(out).toBe('arithmetic task model: 2 layers, vocabulary 35\n');
  });
});
