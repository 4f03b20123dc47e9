import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

/** A README example made runnable: its source and its JavaScript with imports as destructurings. */
function prepareExample(readme: URL, modules: Readonly<Record<string, unknown>>) {
  const text = readFileSync(readme, 'utf8');
  const source = /```ts\n([\s\S]*?)```/.exec(text)?.[1];
  if (source === undefined) throw new Error(`${readme} has no \`\`\`ts example`);
  const body = source.replace(
    /^import \{([^}]+)\} from '([^']+)';$/gm,
    (_, names: string, from: string) => {
      if (!(from in modules)) throw new Error(`the example imports ${from}, which is not given`);
      return `const {${names}} = modules[${JSON.stringify(from)}];`;
    },
  );
  const printed: string[] = [];
  const console = { log: (...args: unknown[]) => printed.push(args.map(String).join(' ')) };
  return { source, printed, console, body };
}

/**
 * Runs the first ```ts block of a package README as a user would paste it: each
 * `import { … } from 'x'` line becomes a destructuring of `modules[x]` (so the example runs
 * against the package's source), esbuild strips the TypeScript, and `console.log` is captured.
 *
 * @param readme URL of the README (e.g. `new URL('../README.md', import.meta.url)`).
 * @param modules the modules the example may import, by specifier.
 * @returns the example's source and the lines it printed.
 * @throws Error when the README has no ```ts block or imports a module not in `modules`.
 */
export function runReadmeExample(
  readme: URL,
  modules: Readonly<Record<string, unknown>>,
): { source: string; printed: string[] } {
  const { source, printed, console, body } = prepareExample(readme, modules);
  const code = transformSync(body, { loader: 'ts' }).code;
  new Function('console', 'modules', code)(console, modules);
  return { source, printed };
}

/**
 * {@link runReadmeExample} for an example that awaits at its top level (a WebGPU device, a
 * read-back): the example runs as the body of an async function, awaited here.
 */
export async function runAsyncReadmeExample(
  readme: URL,
  modules: Readonly<Record<string, unknown>>,
): Promise<{ source: string; printed: string[] }> {
  const { source, printed, console, body } = prepareExample(readme, modules);
  const code = transformSync(`(async (console, modules) => {\n${body}\n})`, { loader: 'ts' })
    .code.trim()
    .replace(/;$/, '');
  const run = new Function(`return ${code}`)() as (c: unknown, m: unknown) => Promise<void>;
  await run(console, modules);
  return { source, printed };
}
