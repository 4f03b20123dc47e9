import { readFileSync } from 'node:fs';
import * as heuristic from '@lethe/policies-heuristic';
import * as tensor from '@lethe/tensor';
import { expect, it } from 'vitest';
import * as lethe from '../../src/index';

/** The ```ts block of the README section `heading`. */
function exampleUnder(heading: string): string {
  const text = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf(heading));
  const source = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (source === undefined) throw new Error(`no example under ${heading}`);
  return source;
}

it('the README example of the continuous batcher runs as written', async () => {
  const modules: Record<string, unknown> = {
    '@lethe/tensor': tensor,
    '@lethe/model': lethe,
    '@lethe/policies-heuristic': heuristic,
  };
  // The example is plain JavaScript apart from its imports, which become destructurings.
  const body = exampleUnder('### Continuous batching').replace(
    /^import \{([^}]+)\} from '([^']+)';$/gm,
    (_, names: string, from: string) => `const {${names}} = modules[${JSON.stringify(from)}];`,
  );
  const printed: string[] = [];
  const console = { log: (...args: unknown[]) => printed.push(args.map(String).join(' ')) };
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
  await new AsyncFunction('console', 'modules', body)(console, modules);
  expect(printed.length).toBe(4);
  for (const line of printed.slice(0, 3)) expect(line).toMatch(/^(length|eos) \d+ \d+ \d\.\d\d$/);
  expect(printed[3]).toMatch(/^true \d+$/);
});
