import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { ALLOWED_IMPORTERS, type AllowedImporter } from './allow-list';
import { bareBuiltin, isNodeBuiltin } from './builtins';

/** One file on the way from the entry to a built-in. */
export interface ChainLink {
  /**
   * The file, relative to the root; third-party files as `<package>/<path in package>` (see
   * {@link AllowedImporter.file}).
   */
  readonly file: string;
  /**
   * For a Lethe build file with a source map: its sources (relative to the root) that import
   * the next link of the chain (or the built-in, for the last link). Empty when unknown.
   */
  readonly sources: readonly string[];
}

/** A Node built-in imported by a module of the entry's browser bundle. */
export interface BuiltinImport {
  /** The built-in as the importing file writes it (`fs`, `node:fs/promises`, …). */
  readonly specifier: string;
  /** The shortest import chain from the entry to the importing file (both included). */
  readonly chain: readonly ChainLink[];
}

/** What {@link checkEntry} found. */
export interface EntryCheck {
  /** The entry, relative to the root. */
  readonly entry: string;
  /** Built-in imports to fix. */
  readonly imports: readonly BuiltinImport[];
  /** Built-in imports of third-party files on the allow-list, with their entry. */
  readonly allowed: readonly (BuiltinImport & { readonly by: AllowedImporter })[];
}

/** Options of {@link checkEntry}. */
export interface CheckEntryOptions {
  /** Directory paths are reported relative to (the repository root). */
  readonly root: string;
  /** Third-party importers allowed to import built-ins (default {@link ALLOWED_IMPORTERS}). */
  readonly allow?: readonly AllowedImporter[];
}

/** Marks the resolution the recorder asks esbuild for itself, so that it does not recurse. */
const SKIP = Symbol('entry-checks: resolve without the recorder');

/**
 * Bundles `entry` as a browser bundler would (esbuild: `platform: 'browser'`, `bundle`, ESM,
 * nothing written) and returns every Node built-in its modules import, each with the import
 * chain that reaches it. Built-ins are marked external, so the bundle completes and all are
 * reported, not just the first.
 *
 * Lethe's files (any path outside `node_modules`) may import no built-in. A third-party file's
 * built-in import counts only when a browser bundler cannot resolve it, i.e. when the package's
 * `browser` field does not map it to `false` or a shim.
 *
 * @throws Error when the entry does not exist or esbuild fails for another reason.
 */
export async function checkEntry(entry: string, options: CheckEntryOptions): Promise<EntryCheck> {
  const { root } = options;
  const allow = options.allow ?? ALLOWED_IMPORTERS;
  const absEntry = resolve(root, entry);
  if (!existsSync(absEntry)) throw new Error(`${relative(root, absEntry)} does not exist`);
  const found: { specifier: string; importer: string }[] = [];
  const { metafile } = await build({
    entryPoints: [absEntry],
    absWorkingDir: root,
    platform: 'browser',
    bundle: true,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [builtinRecorder(found)],
  });
  const parents = importParents(metafile, metafileKey(root, absEntry));
  const sourceImports = new Map<string, Map<string, Set<string>>>();
  const imports: BuiltinImport[] = [];
  const allowed: (BuiltinImport & { by: AllowedImporter })[] = [];
  for (const { specifier, importer } of found) {
    const keys = chainTo(parents, metafileKey(root, importer));
    const chain: ChainLink[] = [];
    for (let i = 0; i < keys.length; i++) {
      const next =
        i + 1 < keys.length ? importSpecifier(metafile, keys[i]!, keys[i + 1]!) : specifier;
      const file = resolve(root, keys[i]!);
      chain.push({
        file: displayPath(root, file),
        sources: await sourcesImporting(file, next, root, sourceImports),
      });
    }
    const item = { specifier, chain };
    const by = isThirdParty(importer)
      ? allow.find((a) => a.file === chain.at(-1)!.file && a.specifiers.includes(specifier))
      : undefined;
    if (by === undefined) imports.push(item);
    else allowed.push({ ...item, by });
  }
  const order = (a: BuiltinImport, b: BuiltinImport): number =>
    a.specifier.localeCompare(b.specifier) || chainText(a).localeCompare(chainText(b));
  return {
    entry: metafileKey(root, absEntry),
    imports: imports.sort(order),
    allowed: allowed.sort(order),
  };
}

function chainText({ chain }: BuiltinImport): string {
  return chain.map((link) => link.file).join(' → ');
}

/**
 * The report of a failed check: per built-in import, its chain, each Lethe build file followed
 * by the sources that hold the import.
 */
export function formatEntryCheck(name: string, check: EntryCheck): string {
  if (check.imports.length === 0) return `${name}: ${check.entry} imports no Node built-in`;
  const lines = [
    `${name}: main entry ${check.entry} imports ${check.imports.length} Node built-in(s) in a browser bundle:`,
  ];
  for (const { specifier, chain } of check.imports) {
    const links = chain.map(({ file, sources }) =>
      sources.length === 0 ? file : `${file} (${sources.join(', ')})`,
    );
    lines.push(`  ${specifier}  ←  ${links.join(' → ')}`);
  }
  lines.push(
    '  Move the importing modules to a Node-only subpath entry (`./node`) or use a platform-neutral API.',
  );
  return lines.join('\n');
}

function builtinRecorder(found: { specifier: string; importer: string }[]): Plugin {
  const seen = new Set<string>(); // a file may import one built-in more than once
  return {
    name: 'record-node-builtins',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === SKIP || !isNodeBuiltin(args.path)) return undefined;
        if (isThirdParty(args.importer)) {
          const resolved = await b.resolve(args.path, {
            kind: args.kind,
            importer: args.importer,
            resolveDir: args.resolveDir,
            pluginData: SKIP,
          });
          // The package's `browser` field maps it (to `false` or a shim): a bundler copes.
          if (resolved.errors.length === 0) return undefined;
        }
        const key = `${args.importer}\0${args.path}`;
        if (!seen.has(key)) found.push({ specifier: args.path, importer: args.importer });
        seen.add(key);
        return { path: args.path, external: true };
      });
    },
  };
}

/** For every input reachable from `entry`, the input that first imported it (breadth-first). */
function importParents(metafile: Metafile, entry: string): Map<string, string | undefined> {
  const parents = new Map<string, string | undefined>([[entry, undefined]]);
  const queue = [entry];
  for (let i = 0; i < queue.length; i++) {
    for (const record of metafile.inputs[queue[i]!]?.imports ?? []) {
      if (record.external || parents.has(record.path)) continue;
      parents.set(record.path, queue[i]);
      queue.push(record.path);
    }
  }
  return parents;
}

function chainTo(parents: Map<string, string | undefined>, key: string): string[] {
  if (!parents.has(key)) return [key];
  const chain: string[] = [];
  for (let at: string | undefined = key; at !== undefined; at = parents.get(at)) chain.unshift(at);
  return chain;
}

/** The specifier with which input `from` imports input `to`, as written in `from`. */
function importSpecifier(metafile: Metafile, from: string, to: string): string {
  const record = metafile.inputs[from]?.imports.find((r) => r.path === to);
  return record?.original ?? to;
}

/** Metafile inputs are named relative to the working directory, with `/`. */
function metafileKey(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}

function isThirdParty(file: string): boolean {
  return file.split(/[\\/]/).includes('node_modules');
}

function displayPath(root: string, file: string): string {
  const parts = file.split(/[\\/]/);
  const last = parts.lastIndexOf('node_modules');
  return last < 0 ? metafileKey(root, file) : parts.slice(last + 1).join('/');
}

/**
 * The Lethe sources of build file `file` (from its source map) that import `specifier`
 * (`node:` or not), relative to the root.
 */
async function sourcesImporting(
  file: string,
  specifier: string,
  root: string,
  cache: Map<string, Map<string, Set<string>>>,
): Promise<string[]> {
  if (isThirdParty(file)) return [];
  let bySource = cache.get(file);
  if (bySource === undefined) {
    bySource = await importsOfSources(file, root);
    cache.set(file, bySource);
  }
  const wanted = isNodeBuiltin(specifier) ? bareBuiltin(specifier) : specifier;
  return [...bySource]
    .filter(([, specs]) =>
      [...specs].some((s) => (isNodeBuiltin(s) ? bareBuiltin(s) : s) === wanted),
    )
    .map(([source]) => source)
    .sort();
}

/** The import specifiers of each Lethe source of `file`, read from `file.map`'s sources. */
async function importsOfSources(file: string, root: string): Promise<Map<string, Set<string>>> {
  const bySource = new Map<string, Set<string>>();
  let map: { sources?: unknown; sourceRoot?: unknown };
  try {
    map = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
  } catch {
    return bySource;
  }
  const base = resolve(dirname(file), typeof map.sourceRoot === 'string' ? map.sourceRoot : '');
  const sources = (Array.isArray(map.sources) ? map.sources : [])
    .filter((s): s is string => typeof s === 'string')
    .map((s) => resolve(base, s))
    .filter((s) => !isThirdParty(s) && /\.[cm]?[jt]sx?$/.test(s) && existsSync(s));
  if (sources.length === 0) return bySource;
  // Each source on its own: every import is recorded and left external.
  const record: Plugin = {
    name: 'record-imports',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const source = metafileKey(root, args.importer);
        const specs = bySource.get(source) ?? new Set<string>();
        bySource.set(source, specs.add(args.path));
        return { path: args.path, external: true };
      });
    },
  };
  await build({
    entryPoints: sources,
    absWorkingDir: root,
    outdir: resolve(root, '.entry-checks-unwritten'),
    bundle: true,
    write: false,
    logLevel: 'silent',
    plugins: [record],
  });
  return bySource;
}
