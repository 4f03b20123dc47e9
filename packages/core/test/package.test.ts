import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('@lethe/core package', () => {
  it('has no dependencies, and its sources import only each other (no node:*, no package)', () => {
    const manifest = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    const sources = readdirSync(`${root}/src`, { recursive: true, encoding: 'utf8' });
    const imports = sources
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => {
        const text = readFileSync(`${root}/src/${file}`, 'utf8');
        return [...text.matchAll(/(?:from|import)\s*\(?'([^']+)'/g)].map((m) => `${file}: ${m[1]}`);
      });
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((entry) => !/: \.\.?\//.test(entry))).toEqual([]);
  });

  it('runs the README safetensors example as printed', () => {
    const readme = readFileSync(`${root}/README.md`, 'utf8');
    const code = /## Safetensors[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const imports = /^import \{([^}]+)\} from '@lethe\/core';\n/m.exec(code)!;
    const names = imports[1]!.split(',').map((name) => name.trim());
    const logged: unknown[][] = [];
    const console = { log: (...args: unknown[]) => logged.push(args) };
    const run = new Function('console', ...names, code.replace(imports[0], ''));
    run(console, ...names.map((name) => (api as Record<string, unknown>)[name]));
    expect(logged).toEqual([
      [
        [2, 2],
        [0.5, -1.25, 2, 0],
      ],
      [[0.10009765625, 0.2001953125]],
      [{ format: 'lethe' }],
    ]);
  });
});
