#!/usr/bin/env node
// Checks the commands the READMEs tell a user to run, on a machine with Node and npm only (CI
// runs it from .ci/run on a clean clone after `npm test`, so the build is done and cached):
//
// 1. Every command in a README or doc (fenced sh blocks and inline code) names something that
//    exists: `npm run <script>` a script of the package it runs in (the README's own, the root,
//    or the directory a `cd` in the block moved to); `node scripts/pnpm.mjs --filter <pkg>
//    <script>` a package and its script; `… exec turbo run <task>` a turbo task; `lethe <cmd>`
//    a subcommand of the built CLI. The flags given to `lethe` and to the examples' commander
//    scripts must be ones their `--help` lists.
// 2. The root README's own commands run and do what it says (`npm run build`, `npm run
//    typecheck`, `npm run lethe -- --help`, the quickstart), and the NGC example's evaluate
//    command, without trained runs, stops at once with one coded line.
// 3. With `--log <file>` (the log of `npm test`), the log has no "Failed to create bin"
//    warning, no tfjs Node banner and no ANSI escape codes.
//
// Usage: node scripts/check-readme-commands.mjs [--static-only] [--log <npm test log>]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = join(import.meta.dirname, '..');
const { values: flags } = parseArgs({
  options: { 'static-only': { type: 'boolean', default: false }, log: { type: 'string' } },
});

const failures = [];
const fail = (message) => {
  failures.push(message);
  console.log(`FAIL ${message}`);
};
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** The README and doc files whose commands are checked, relative to the root. */
function markdownFiles() {
  const inDirs = (dir, name) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, dir, d.name, name)))
      .map((d) => `${dir}/${d.name}/${name}`);
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return [
    'README.md',
    ...inDirs('packages', 'README.md'),
    ...inDirs('examples', 'README.md'),
    'models/README.md',
    ...docs,
  ];
}

/** Workspace packages by name: directory (relative) and scripts. */
const workspace = new Map(
  ['packages', 'examples'].flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, dir, d.name, 'package.json')))
      .map((d) => {
        const manifest = readJson(join(root, dir, d.name, 'package.json'));
        return [manifest.name, { dir: `${dir}/${d.name}`, scripts: manifest.scripts ?? {} }];
      }),
  ),
);
const workspaceDirs = [...workspace.values()].map((p) => p.dir);
const rootScripts = readJson(join(root, 'package.json')).scripts;
const turboTasks = Object.keys(readJson(join(root, 'turbo.json')).tasks);
const scriptsOf = (dir) =>
  dir === '.' ? rootScripts : (readJson(join(root, dir, 'package.json')).scripts ?? {});

/** The package directory (relative, '.' for the root) a file belongs to. */
function packageDirOf(file) {
  for (let dir = dirname(join(root, file)); dir.startsWith(root); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return relative(root, dir) || '.';
  }
  return '.';
}

/**
 * The commands of a Markdown file: each line of a fenced sh/bash block (continuations joined,
 * comments dropped; a `cd` sets the directory of the block's later commands) and each inline
 * code span that starts like a command. `dirs` are the package directories a command may run in.
 */
function commandsOf(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const own = packageDirOf(file);
  const commands = [];
  const fence = /^```([a-z]*)\n([\s\S]*?)^```$/gm;
  for (const [, lang, body] of text.matchAll(fence)) {
    if (!['sh', 'bash', 'shell'].includes(lang)) continue;
    let cd;
    for (const raw of body.replace(/\\\n\s*/g, '').split('\n')) {
      const line = raw.replace(/(^|\s)#.*$/, '').trim();
      if (line === '') continue;
      const moved = /^cd\s+(\S+)$/.exec(line);
      if (moved) {
        cd = relative(root, resolve(root, moved[1])) || '.';
        continue;
      }
      commands.push({ file, command: line, dirs: cd ? [cd] : [own, '.'] });
    }
  }
  // Inline commands run in the README's package or the root; those of the files outside any
  // package but the root README (models/, docs/) in a package their prose names, so any.
  const inline = own !== '.' ? [own, '.'] : file === 'README.md' ? ['.'] : ['.', ...workspaceDirs];
  const prose = text.replace(fence, '');
  const start = /^(npm (run|start|test)|npx lethe|lethe [a-z]|node scripts\/pnpm\.mjs)/;
  for (const [, span] of prose.matchAll(/`([^`]+)`/g)) {
    const command = span.replace(/\s*\n\s*/g, ' ').trim();
    if (!start.test(command) || command.includes('…')) continue;
    commands.push({ file, command, dirs: inline });
  }
  return commands;
}

/** Runs `command` in `cwd` through the shell; status, stdout, stderr and seconds. */
function sh(command, cwd = '.', timeoutMs = 600_000) {
  const t = performance.now();
  const run = spawnSync(command, {
    cwd: join(root, cwd),
    shell: true,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const seconds = (performance.now() - t) / 1000;
  const stderr = `${run.stderr ?? ''}${run.error ? `\n${run.error.message}` : ''}`;
  return { status: run.status, stdout: run.stdout ?? '', stderr, seconds };
}

const lethe = join(root, 'packages/cli/bin/lethe.mjs');
const helpCache = new Map();
/** The `--help` text of a commander program, run by `command` in `cwd` (cached). */
function help(key, command, cwd) {
  if (!helpCache.has(key)) {
    const run = sh(command, cwd, 120_000);
    helpCache.set(key, run.status === 0 ? run.stdout : undefined);
    if (run.status !== 0) fail(`${command} (in ${cwd}) exits ${run.status}:\n${run.stderr}`);
  }
  return helpCache.get(key);
}

/** The `--flag`s in `args` that `helpText` does not list. */
function unknownFlags(args, helpText) {
  if (helpText === undefined) return [];
  return [...args.join(' ').matchAll(/(?<=^|\s)--[a-z][a-z0-9-]*/g)]
    .map(([flag]) => flag)
    .filter((flag) => !new RegExp(`(^|[\\s,])${flag}(?=[\\s=,]|$)`, 'm').test(helpText));
}

/** Checks that every `--flag` in `args` is one `helpText` lists. */
function checkFlags(where, args, helpText) {
  for (const flag of unknownFlags(args, helpText)) {
    fail(`${where}: ${flag} is not an option (not in its --help)`);
  }
}

/** Words of a simple command, with single- and double-quoted words kept whole. */
function words(command) {
  return [...command.matchAll(/'[^']*'|"[^"]*"|\S+/g)].map(([w]) => w);
}

/** Checks one simple command (no `&&`, `|`, `;`) of a README; returns what it was. */
function checkCommand(where, dirs, command) {
  const w = words(command);
  if (w[0] === 'npx' && w[1] === 'lethe') w.splice(0, 2, 'lethe');
  if (w[0] === 'lethe') {
    const sub = w[1];
    const top = help('lethe', `node ${lethe} --help`, '.');
    if (top === undefined) return;
    if (!new RegExp(`^\\s+${sub}\\b`, 'm').test(top)) {
      fail(`${where}: lethe has no command "${sub}"`);
      return;
    }
    checkFlags(where, w.slice(2), help(`lethe ${sub}`, `node ${lethe} ${sub} --help`, '.'));
    return;
  }
  if (w[0] === 'npm' && ['run', 'run-script', 'start', 'test'].includes(w[1])) {
    const script = w[1] === 'start' || w[1] === 'test' ? w[1] : w[2];
    const candidates = dirs.filter((d) => script in scriptsOf(d));
    if (candidates.length === 0) {
      const packages =
        dirs.length > 2 ? 'any package' : dirs.map((d) => `${d}/package.json`).join(' or ');
      fail(`${where}: no script "${script}" in ${packages}`);
      return;
    }
    // The flags after `--` must be options of the script (of one of them, where the README
    // leaves the package to its prose).
    const programs = candidates.filter((d) => /^tsx /.test(scriptsOf(d)[script]));
    if (!w.includes('--') || programs.length === 0) return;
    const rest = w.slice(w.indexOf('--') + 1);
    const missing = programs.map((d) =>
      unknownFlags(rest, help(`${d} ${script}`, `npm run -s ${script} -- --help`, d)),
    );
    if (missing.every((m) => m.length > 0)) {
      for (const flag of missing[0]) fail(`${where}: ${flag} is not an option (not in its --help)`);
    }
    return;
  }
  if (w[0] === 'node' && w[1] === 'scripts/pnpm.mjs') {
    if (w[2] === 'exec' && w[3] === 'turbo' && w[4] === 'run') {
      const firstFlag = w.findIndex((t, i) => i >= 5 && t.startsWith('-'));
      for (const task of w.slice(5, firstFlag === -1 ? undefined : firstFlag)) {
        if (!turboTasks.includes(task)) fail(`${where}: turbo.json has no task "${task}"`);
      }
      return;
    }
    if (w[2] === '--filter') {
      const pkg = workspace.get(w[3]);
      if (pkg === undefined) {
        fail(`${where}: no workspace package "${w[3]}"`);
        return;
      }
      const script = w[4] === 'run' ? w[5] : w[4];
      if (!(script in pkg.scripts)) {
        fail(`${where}: ${w[3]} has no script "${script}"`);
        return;
      }
      const rest = w.slice(w.indexOf(script) + 1).filter((a) => a !== '--');
      if (rest.length > 0 && /^tsx /.test(pkg.scripts[script])) {
        checkFlags(
          where,
          rest,
          help(`${pkg.dir} ${script}`, `npm run -s ${script} -- --help`, pkg.dir),
        );
      }
    }
  }
}

// 1. What the READMEs name exists.
let named = 0;
for (const file of markdownFiles()) {
  for (const { command, dirs } of commandsOf(file)) {
    for (const part of command.split(/\s*(?:&&|;|\|\|?)\s*/)) {
      named += 1;
      checkCommand(`${file}: \`${part}\``, dirs, part);
    }
  }
}
console.log(`${failures.length === 0 ? 'ok  ' : 'FAIL'} ${named} commands named in the READMEs`);

// 2. The root README's commands run (and the NGC example's evaluate checks its inputs first).
const oneCodedLine = (stderr) =>
  stderr.split('\n').filter((l) => l.trim() !== '' && !/^npm (warn|error|notice)\b/.test(l));
const RUNS = [
  { file: 'README.md', command: 'npm run build' },
  { file: 'README.md', command: 'npm run typecheck' },
  { file: 'README.md', command: 'npm run lethe -- --help', stdout: /Usage: lethe/ },
  { file: 'README.md', command: 'npm run lethe -- policies', stdout: /^snapkv$/m },
  {
    file: 'README.md',
    command: 'node scripts/pnpm.mjs --filter @lethe/example-quickstart start',
    stdout: /── streaming-llm \(capacity 64 entries per KV head\) ──/,
  },
  {
    file: 'examples/quickstart/README.md',
    cwd: 'examples/quickstart',
    command: 'npm start -- --checkpoint my-model',
    status: 2,
    stderr:
      /^error: \[E_CHECKPOINT\] --checkpoint: my-model is missing; .*npm run train -- --out my-model/,
    skipWhen: 'examples/quickstart/my-model',
  },
  {
    file: 'examples/ngc-countdown/README.md',
    cwd: 'examples/ngc-countdown',
    command:
      'npm run evaluate -- --baseline runs/no-evict --run ngc=runs/ngc --run token-only=runs/token-only --run dropout=runs/dropout --run ngc-to-0.3-warm=runs/ngc-to-0.3-warm --run intero-to-0.3-warm=runs/intero-to-0.3-warm --rates 0.1,0.2,0.3,0.4,0.5 --out out/ngc-eval',
    status: 2,
    stderr: /^error: \[E_CHECKPOINT\] --baseline \(runs\/no-evict\): cannot be read/,
    skipWhen: 'examples/ngc-countdown/runs',
  },
];
if (!flags['static-only']) {
  const gitStatus = () => {
    const run = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], {
      cwd: root,
      encoding: 'utf8',
    });
    return run.status === 0 ? new Set(run.stdout.split('\n').filter(Boolean)) : undefined;
  };
  const before = gitStatus();
  for (const check of RUNS) {
    const where = `${check.file}: \`${check.command}\``;
    const documented = readFileSync(join(root, check.file), 'utf8').replace(/\\\n\s*/g, '');
    if (!documented.replace(/\s+/g, ' ').includes(check.command)) {
      fail(
        `${where} is no longer in ${check.file}: update RUNS in scripts/check-readme-commands.mjs`,
      );
      continue;
    }
    if (check.skipWhen && existsSync(join(root, check.skipWhen))) {
      console.log(`skip ${where}: ${check.skipWhen} exists here`);
      continue;
    }
    const run = sh(check.command, check.cwd);
    const status = check.status ?? 0;
    const problems = [];
    if (run.status !== status) problems.push(`exit ${run.status}, expected ${status}`);
    if (check.stdout && !check.stdout.test(run.stdout))
      problems.push(`stdout lacks ${check.stdout}`);
    if (check.stderr) {
      const lines = oneCodedLine(run.stderr);
      if (lines.length !== 1 || !check.stderr.test(lines[0])) {
        problems.push(`stderr is not one line matching ${check.stderr}`);
      }
    }
    if (problems.length > 0) {
      const tail = (s) => s.split('\n').slice(-15).join('\n');
      fail(
        `${where}: ${problems.join('; ')}\n--- stdout\n${tail(run.stdout)}\n--- stderr\n${tail(run.stderr)}`,
      );
    } else {
      console.log(`ok   ${where} (${run.seconds.toFixed(0)} s)`);
    }
  }
  const after = gitStatus();
  if (before && after) {
    const fresh = [...after].filter((line) => !before.has(line));
    if (fresh.length > 0) fail(`the commands left files git does not ignore:\n${fresh.join('\n')}`);
  }
}

// 3. The test log is quiet.
if (flags.log) {
  const log = readFileSync(flags.log, 'utf8');
  const noise = [
    ['Failed to create bin at', '"Failed to create bin" warning'],
    ['running TensorFlow.js in Node.js', 'tfjs Node banner'],
    ['\u001b[', 'ANSI escape code'],
  ];
  for (const [text, what] of noise) {
    const line = log.split('\n').find((l) => l.includes(text));
    if (line === undefined) console.log(`ok   ${flags.log} has no ${what}`);
    else fail(`${flags.log} has ${what}: ${JSON.stringify(line.slice(0, 200))}`);
  }
}

if (failures.length > 0) {
  console.log(`\ncheck-readme-commands: ${failures.length} failure(s)`);
  process.exit(1);
}
console.log('\ncheck-readme-commands: every checked command works as documented');
