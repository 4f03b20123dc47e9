#!/usr/bin/env node
// Packs every publishable package, installs the tarballs into an empty project with npm, and
// checks that each package imports under ESM and CJS and type-checks under TypeScript's
// node16 resolution from both module kinds — what a user of a single package experiences.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const packagesDir = join(root, 'packages');
const only = process.argv.slice(2);
const names = readdirSync(packagesDir).filter((d) => {
  if (only.length > 0 && !only.includes(d)) return false;
  try {
    return !JSON.parse(readFileSync(join(packagesDir, d, 'package.json'), 'utf8')).private;
  } catch {
    return false;
  }
});
const work = mkdtempSync(join(tmpdir(), 'lethe-pack-'));
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });

try {
  const tarballs = names.map((d) => {
    const out = run(
      process.execPath,
      [join(root, 'scripts/pnpm.mjs'), 'pack', '--pack-destination', work],
      join(packagesDir, d),
    );
    return out.trim().split('\n').pop();
  });
  const app = join(work, 'app');
  run('mkdir', ['-p', app]);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'pack-check-app', private: true, version: '0.0.0' }),
  );
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...tarballs,
      'typescript@5.9.3',
      '@types/node@20',
    ],
    app,
  );
  // Every entry point of every package: '.' and subpaths such as '@lethe/model/node'.
  const pkgs = names.flatMap((d) => {
    const manifest = JSON.parse(readFileSync(join(packagesDir, d, 'package.json'), 'utf8'));
    return Object.keys(manifest.exports)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`));
  });

  for (const name of pkgs) {
    const esm = run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as m from '${name}'; console.log(Object.keys(m).length);`,
      ],
      app,
    );
    const cjs = run(
      process.execPath,
      ['-e', `console.log(Object.keys(require('${name}')).length);`],
      app,
    );
    if (Number(esm) === 0 || Number(cjs) === 0)
      throw new Error(`${name}: empty exports (esm ${esm.trim()}, cjs ${cjs.trim()})`);
    console.log(`ok  ${name}: ESM ${esm.trim()} exports, CJS ${cjs.trim()} exports`);
  }
  const imports = pkgs.map((n, i) => `import * as p${i} from '${n}';\nvoid p${i};`).join('\n');
  writeFileSync(join(app, 'check.mts'), imports);
  writeFileSync(
    join(app, 'check.cts'),
    pkgs.map((n, i) => `import p${i} = require('${n}');\nvoid p${i};`).join('\n'),
  );
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'node16',
        moduleResolution: 'node16',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        lib: ['ES2022', 'DOM'],
      },
      files: ['check.mts', 'check.cts'],
    }),
  );
  run(join(app, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], app);
  console.log(`ok  types resolve for ${pkgs.length} entry points under node16 (ESM and CJS)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
