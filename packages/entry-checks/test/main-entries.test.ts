import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ALLOWED_IMPORTERS,
  type AllowedImporter,
  checkEntry,
  type EntryCheck,
  formatEntryCheck,
  publicPackages,
  readManifest,
} from '../src/index';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const packages = publicPackages(root);
const fixtures = 'packages/entry-checks/test/fixtures';

describe('main entries bundle for the browser without Node built-ins', () => {
  const checks = new Map<string, EntryCheck>();

  it('covers every published package, each built before this test', () => {
    expect(packages.map((p) => p.name)).toContain('@lethe/eval');
    const devDependencies = readManifest(root, 'packages/entry-checks').devDependencies ?? {};
    const unbuilt = packages.filter((p) => devDependencies[p.name] !== 'workspace:*');
    expect(
      unbuilt.map((p) => p.name),
      'list these in packages/entry-checks/package.json devDependencies as "workspace:*", so ' +
        "that turbo's ^build builds them before this test",
    ).toEqual([]);
  });

  it.each(packages)('$name', async ({ name, mainEntry }) => {
    let check: EntryCheck;
    try {
      check = await checkEntry(mainEntry, { root });
    } catch (error) {
      throw new Error(
        `${name}: ${(error as Error).message} (is it built and up to date? turbo run build)`,
      );
    }
    checks.set(name, check);
    if (check.imports.length > 0) expect.fail(formatEntryCheck(name, check));
  });

  it('allow-lists only third-party files, each still needed', () => {
    const own = ALLOWED_IMPORTERS.filter(
      (a) => a.file.startsWith('@lethe/') || a.file.startsWith('packages/'),
    );
    expect(own, "Lethe's own code is never allow-listed: move it to ./node").toEqual([]);
    if (checks.size < packages.length) return; // some package failed to bundle: reported above
    const used = new Set([...checks.values()].flatMap((c) => c.allowed.map((a) => a.by)));
    const stale = ALLOWED_IMPORTERS.filter((a) => !used.has(a)).map((a) => a.file);
    expect(stale, 'allow-list entries no main entry needs any more').toEqual([]);
  });
});

describe('checkEntry', () => {
  const temp = mkdtempSync(join(tmpdir(), 'lethe-entry-checks-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));
  const write = (file: string, text: string): void => {
    mkdirSync(dirname(join(temp, file)), { recursive: true });
    writeFileSync(join(temp, file), text);
  };

  it('reports every built-in of an entry with the chain of importers that reaches it', async () => {
    const entry = `${fixtures}/node-entry/index.js`;
    const check = await checkEntry(entry, { root });
    expect(check.imports).toEqual([
      {
        specifier: 'node:fs',
        chain: [
          { file: entry, sources: [] },
          { file: `${fixtures}/node-entry/reads-file.js`, sources: [] },
        ],
      },
      { specifier: 'path', chain: [{ file: entry, sources: [] }] },
    ]);
    const report = formatEntryCheck('fixture', check);
    expect(report).toContain(`node:fs  ←  ${entry} → ${fixtures}/node-entry/reads-file.js`);
    expect(report).toContain(`path  ←  ${entry}`);
  });

  it('names the sources of a bundled build file that hold the import', async () => {
    // Built like a package's dist: one bundle with a source map, the built-in left external.
    const outfile = join(temp, 'bundled/dist/index.js');
    await build({
      entryPoints: [join(root, fixtures, 'bundled/src/index.ts')],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      external: ['node:*'],
      sourcemap: true,
      logLevel: 'silent',
    });
    const check = await checkEntry(outfile, { root });
    expect(check.imports).toHaveLength(1);
    expect(check.imports[0]!.specifier).toBe('node:fs/promises');
    expect(check.imports[0]!.chain.map((link) => link.sources)).toEqual([
      [`${fixtures}/bundled/src/results-store.ts`],
    ]);
  });

  it("honours third-party `browser` fields and the allow-list, naming the package's file", async () => {
    write(
      'third-party/node_modules/guarded/package.json',
      JSON.stringify({ name: 'guarded', main: 'index.js', browser: { fs: false } }),
    );
    write('third-party/node_modules/guarded/index.js', "module.exports = require('fs');\n");
    write(
      'third-party/node_modules/unguarded/package.json',
      JSON.stringify({ name: 'unguarded', main: 'lib/index.js' }),
    );
    write('third-party/node_modules/unguarded/lib/index.js', "module.exports = require('os');\n");
    write('third-party/entry.js', "import 'guarded';\nimport 'unguarded';\n");
    const dir = join(temp, 'third-party');

    const check = await checkEntry('entry.js', { root: dir, allow: [] });
    expect(check.imports).toEqual([
      {
        specifier: 'os',
        chain: [
          { file: 'entry.js', sources: [] },
          { file: 'unguarded/lib/index.js', sources: [] },
        ],
      },
    ]);

    const allowed: AllowedImporter = {
      file: 'unguarded/lib/index.js',
      specifiers: ['os'],
      why: 'test',
    };
    const allowing = await checkEntry('entry.js', { root: dir, allow: [allowed] });
    expect(allowing.imports).toEqual([]);
    expect(allowing.allowed.map((a) => a.by)).toEqual([allowed]);
  });

  it('fails for an entry that was not built', async () => {
    await expect(checkEntry('packages/entry-checks/dist/index.js', { root })).rejects.toThrow(
      'packages/entry-checks/dist/index.js does not exist',
    );
  });
});
