import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('package shape', () => {
  it('depends on @lethe/core only, and the sources import nothing else (no node:*)', () => {
    const manifest = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
    expect(Object.keys(manifest.dependencies)).toEqual(['@lethe/core']);
    expect(manifest.peerDependencies).toBeUndefined();
    for (const file of readdirSync(`${root}/src`)) {
      const text = readFileSync(`${root}/src/${file}`, 'utf8');
      const specifiers = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      for (const s of specifiers) {
        expect(s.startsWith('./') || s === '@lethe/core', `${file} imports ${s}`).toBe(true);
      }
      expect(text, file).not.toMatch(/\brequire\(|process\.|globalThis\.process/);
    }
  });

  it('the README example runs as printed', () => {
    const readme = readFileSync(`${root}/README.md`, 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const imports = /^import \{([^}]+)\} from '@lethe\/es-cmaes';\n/m.exec(code)!;
    const names = imports[1]!.split(',').map((s) => s.trim());
    const body = code.replace(imports[0], '');
    const lines: string[] = [];
    const console = { log: (...args: unknown[]) => lines.push(args.map(String).join(' ')) };
    const run = new Function('console', ...names, body);
    run(console, ...names.map((n) => (api as Record<string, unknown>)[n]));
    expect(lines.at(-1)).toMatch(/^f = \d/);
    const f = Number(/^f = (\S+)/.exec(lines.at(-1)!)![1]);
    expect(f).toBeLessThanOrEqual(1e-10);
  });
});
