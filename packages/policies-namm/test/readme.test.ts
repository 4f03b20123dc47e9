import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as core from '@lethe/core';
import * as kvCache from '@lethe/kv-cache';
import { transformSync } from 'esbuild';
import { expect, it } from 'vitest';
import * as api from '../src/index';

const modules: Record<string, unknown> = {
  '@lethe/core': core,
  '@lethe/kv-cache': kvCache,
  '@lethe/policies-namm': api,
};

it('the README example runs as printed', () => {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const source = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  // Imports become destructurings of the modules above; the TypeScript is stripped by esbuild.
  const body = source.replace(
    /^import \{([^}]+)\} from '([^']+)';$/gm,
    (_, names: string, from: string) => {
      expect(Object.keys(modules)).toContain(from);
      return `const {${names}} = modules[${JSON.stringify(from)}];`;
    },
  );
  const code = transformSync(body, { loader: 'ts' }).code;
  const lines: string[] = [];
  const console = { log: (...args: unknown[]) => lines.push(args.map(String).join(' ')) };
  new Function('console', 'modules', code)(console, modules);
  expect(lines).toEqual(['1,1']);
});
