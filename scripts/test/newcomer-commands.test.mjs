// Tests of the root tooling a newcomer meets first: the `lethe` bin shim, the pnpm wrapper's
// colour handling and the silenced tfjs banner. Run by `npm test` (node --test scripts/test/).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const node = (args, options = {}) =>
  spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', ...options });
const work = mkdtempSync(join(tmpdir(), 'lethe-scripts-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

describe('the lethe bin', () => {
  const cliDir = join(root, 'packages/cli');
  const { bin } = JSON.parse(readFileSync(join(cliDir, 'package.json'), 'utf8'));

  it('is a committed file, not a build output (so a fresh install links it without a warning)', () => {
    assert.equal(bin.lethe, './bin/lethe.mjs');
    assert.ok(existsSync(join(cliDir, bin.lethe)));
    assert.doesNotMatch(bin.lethe, /dist\//);
  });

  it('says to build first when the CLI is not built, in one line', () => {
    mkdirSync(join(work, 'pkg/bin'), { recursive: true });
    copyFileSync(join(cliDir, bin.lethe), join(work, 'pkg/bin/lethe.mjs'));
    const run = node([join(work, 'pkg/bin/lethe.mjs'), '--help']);
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    assert.match(
      run.stderr,
      /^lethe: the CLI is not built yet \(.*dist\/cli\.js is missing\): run `npm run build`/,
    );
    assert.equal(run.stderr.trim().split('\n').length, 1);
  });

  const built = existsSync(join(cliDir, 'dist/cli.js'));
  it('runs the built CLI with its exit status', { skip: !built && 'not built' }, () => {
    const help = node([join(cliDir, bin.lethe), '--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: lethe /);
    const bad = node([join(cliDir, bin.lethe), 'eval', '--budget', '7']);
    assert.equal(bad.status, 2);
  });

  it('is what `npm run lethe` runs at the root', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    assert.equal(scripts.lethe, 'node packages/cli/bin/lethe.mjs');
  });
});

describe('scripts/pnpm.mjs', () => {
  const envOf = (env) =>
    node(
      [
        'scripts/pnpm.mjs',
        'exec',
        'node',
        '-e',
        'process.stdout.write(String(process.env.NO_COLOR) + "|" + String(process.env.FORCE_COLOR))',
      ],
      { env: { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, ...env } },
    );

  it('sets NO_COLOR when its output is not a terminal', () => {
    const run = envOf({});
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, '1|undefined');
  });

  it('leaves colours to FORCE_COLOR and an explicit NO_COLOR', () => {
    assert.equal(envOf({ FORCE_COLOR: '1' }).stdout, 'undefined|1');
    assert.equal(envOf({ NO_COLOR: '' }).stdout, '|undefined');
  });

  it('passes SIGTERM on to what it runs, and exits only once that has finished', async () => {
    // a "server" that says it is ready, and on SIGTERM takes 1.5 s to drain, then writes a mark
    const mark = join(work, 'drained');
    const server = `process.on('SIGTERM', () => setTimeout(() => { require('fs').writeFileSync(${JSON.stringify(mark)}, 'ok'); process.exit(0); }, 1500)); console.log('ready'); setInterval(() => {}, 1000);`;
    const shim = spawn(process.execPath, ['scripts/pnpm.mjs', 'exec', 'node', '-e', server], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((resolve) =>
      shim.stdout.on('data', (data) => String(data).includes('ready') && resolve()),
    );
    const start = Date.now();
    shim.kill('SIGTERM');
    const [code] = await once(shim, 'exit');
    assert.ok(existsSync(mark), 'the child drained before the launcher exited');
    assert.ok(
      Date.now() - start >= 1400,
      `the launcher waited for the drain (${Date.now() - start} ms)`,
    );
    assert.notEqual(code, null);
  });
});

describe('the tfjs Node banner', () => {
  const tensor = join(root, 'packages/tensor/dist/index.js');
  it('is not printed by the cpu backend, and tfjs still knows it runs in Node', {
    skip: !existsSync(tensor) && 'packages/tensor is not built',
  }, () => {
    const code = `const t = await import(${JSON.stringify(tensor)});
      await t.initBackend('cpu');
      t.tf.tidy(() => t.tf.add(t.tf.scalar(1), t.tf.scalar(2)).dataSync());
      console.log(t.tf.env().getBool('IS_NODE'));`;
    const run = node(['--input-type=module', '-e', code]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'true');
    assert.doesNotMatch(run.stderr, /TensorFlow\.js in Node\.js|tfjs-node/);
  });
});

describe('examples/ngc-countdown: npm run evaluate', () => {
  const example = join(root, 'examples/ngc-countdown');
  const built = existsSync(join(root, 'packages/eval/dist/node.js'));
  const evaluate = (...args) =>
    node(['--import', 'tsx', 'src/evaluate.ts', ...args], { cwd: example, timeout: 120_000 });
  const codedLine = (run) => run.stderr.split('\n').filter((l) => l.trim() !== '');

  it('checks its inputs before any cell: one coded line, exit 2, nothing written', {
    skip: !built && 'not built',
  }, () => {
    const out = join(work, 'ngc-eval');
    const missing = evaluate('--baseline', join(work, 'no-evict'), '--out', out);
    assert.equal(missing.status, 2, missing.stderr);
    assert.deepEqual(codedLine(missing), [
      `error: [E_CHECKPOINT] --baseline (${join(work, 'no-evict')}): cannot be read: no such file or directory (ENOENT)`,
    ]);
    // A run whose weights are not there (the committed results keep only its record) is refused
    // after the models are checked and before its policy.json is written or a cell runs.
    const unweighted = evaluate(
      '--baseline',
      '../../models/countdown-rl',
      '--run',
      'ngc=results/runs/ngc',
      '--out',
      out,
    );
    assert.equal(unweighted.status, 2, unweighted.stderr);
    assert.match(
      codedLine(unweighted).join('\n'),
      /^error: \[E_CHECKPOINT\] --run ngc \(results\/runs\/ngc\/config\.json\): is missing$/,
    );
    assert.equal(codedLine(unweighted).length, 1);
    assert.ok(!existsSync(out));
    assert.ok(!existsSync(join(example, 'results/runs/ngc/policy.json')));
  });
});
