import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDocExample } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// The README's matrix example, run as written by a bare `node` from this package's directory (the
// built packages, as a policy package outside this repository would load them).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '../..');

describe('README: Testing a policy', () => {
  it('runs every case of StreamingLLM through the kit', () => {
    const out = runDocExample(join(pkg, 'README.md'), '## Testing a policy', pkg);
    expect(out).toMatch(/^\d+ cases passed, e\.g\. streaming-llm × per-head × KVCache loop\n$/);
    expect(Number(out.split(' ')[0])).toBeGreaterThanOrEqual(8);
  });
});

describe('README: Testing compositions', () => {
  it('runs H2O in two modes with Quest through the composed matrix', () => {
    const out = runDocExample(join(pkg, 'README.md'), '### Testing compositions', pkg);
    expect(out).toBe(
      'h2o+quest × per-head+read-defaults × generate()\nh2o+quest × block+read-defaults × generate()\n',
    );
  });
});
