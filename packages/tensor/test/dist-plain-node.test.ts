import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const script = (load: string) => `${load}
(async () => {
  await initBackend('wasm');
  const g = tf.grad((x) => tf.sum(tf.square(tf.gather(x, tf.tensor1d([0, 0, 2], 'int32')))));
  const out = await g(tf.tensor2d([[1, 2], [3, 4], [5, 6]])).data();
  console.log(JSON.stringify(Array.from(out)));
})();`;

// Plain Node (no bundler, no vitest transform) must get gradients from the built package
// (turbo builds the package before its tests).
describe('built package in plain Node', () => {
  const expected = [4, 8, 0, 0, 10, 12];
  it('ESM import registers gradients', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        script(`import { tf, initBackend } from '${join(pkg, 'dist/index.js')}';`),
      ],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual(expected);
  });
  it('CJS require registers gradients', () => {
    const out = execFileSync(
      process.execPath,
      ['-e', script(`const { tf, initBackend } = require('${join(pkg, 'dist/index.cjs')}');`)],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual(expected);
  });
});

describe('initBackend("auto") fallback', () => {
  it('falls back to cpu, with a warning, when wasm cannot start', () => {
    const code = `import { tf, initBackend } from '${join(pkg, 'dist/index.js')}';
      tf.removeBackend('wasm');
      const name = await initBackend('auto');
      console.log(JSON.stringify({ name, sum: (await tf.sum(tf.ones([3])).data())[0] }));`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      encoding: 'utf8',
      env: { ...process.env, VK_ICD_FILENAMES: '/nonexistent/icd.json' },
    });
    expect(JSON.parse(result.stdout.trim().split('\n').pop()!)).toEqual({ name: 'cpu', sum: 3 });
    expect(result.stderr).toMatch(/falling back to the cpu backend/);
  });
});
