#!/usr/bin/env node
// Packs every publishable package, installs the tarballs into an empty project with npm, and
// checks that each package imports under ESM and CJS and type-checks under TypeScript's
// node16 resolution from both module kinds — what a user of a single package experiences.
// Then it prints what each main entry costs: its import time and its install closure.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
const readManifest = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/** Milliseconds `import(name)` takes in a fresh `node` started in `app`: the median of 3. */
function importMs(app, name) {
  const code = `const t = performance.now(); await import('${name}'); console.log(performance.now() - t);`;
  const times = [0, 1, 2].map(() =>
    Number(run(process.execPath, ['--input-type=module', '-e', code], app)),
  );
  return times.sort((a, b) => a - b)[1];
}

/** Where Node would find package `name` from `dir`: the nearest `node_modules/<name>` above. */
function findPackage(name, dir, app) {
  for (let at = dir; at.startsWith(app); at = dirname(at)) {
    const candidate = join(at, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
  }
  return undefined;
}

/** Bytes of the files under `dir`, without its nested `node_modules` (packages of their own). */
function treeBytes(dir) {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    bytes += entry.isDirectory() ? treeBytes(path) : lstatSync(path).size;
  }
  return bytes;
}

/**
 * The install closure of package `name` in `app`: the package and every package reachable
 * through `dependencies` and non-optional `peerDependencies`, each counted once.
 */
function closure(app, name) {
  const seen = new Set();
  let bytes = 0;
  const visit = (dep, from) => {
    const dir = findPackage(dep, from, app);
    if (dir === undefined) throw new Error(`${dep} (needed from ${from}) is not installed`);
    if (seen.has(dir)) return;
    seen.add(dir);
    bytes += treeBytes(dir);
    const manifest = readManifest(dir);
    const optional = manifest.peerDependenciesMeta ?? {};
    const peers = Object.keys(manifest.peerDependencies ?? {}).filter(
      (p) => !optional[p]?.optional,
    );
    for (const next of [...Object.keys(manifest.dependencies ?? {}), ...peers]) visit(next, dir);
  };
  visit(name, app);
  return { packages: seen.size, bytes };
}

/** Prints rows of cells as a table with aligned columns (text left, numbers right). */
function printTable(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  for (const row of rows) {
    const cells = row.map((cell, c) =>
      c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]),
    );
    console.log(cells.join('  '));
  }
}

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
    // A command-line package (a `bin`, no `exports`) has no entry to import; its bin runs below.
    return Object.keys(manifest.exports ?? {})
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

  // Every bin of every package runs from the install (`lethe --help`).
  for (const d of names) {
    for (const bin of Object.keys(readManifest(join(packagesDir, d)).bin ?? {})) {
      const help = run(join(app, 'node_modules/.bin', bin), ['--help'], app);
      if (!help.includes(`Usage: ${bin}`))
        throw new Error(`${bin} --help printed no usage:\n${help}`);
      console.log(`ok  ${bin} --help runs from the installed tarball`);
    }
  }

  const importable = names.filter((d) => readManifest(join(packagesDir, d)).exports !== undefined);
  const costs = importable.map((d) => {
    const { name } = readManifest(join(packagesDir, d));
    const { packages, bytes } = closure(app, name);
    return [name, importMs(app, name).toFixed(0), (bytes / 2 ** 20).toFixed(2), String(packages)];
  });
  console.log('\nWhat importing each main entry costs (import: cold node, median of 3; closure:');
  console.log('the package and all it installs through dependencies and required peers)\n');
  printTable([['package', 'import ms', 'closure MiB', 'packages'], ...costs]);
} finally {
  rmSync(work, { recursive: true, force: true });
}
