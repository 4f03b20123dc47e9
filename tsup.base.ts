import type { Options } from 'tsup';

/** Shared tsup settings: dual ESM + CJS build with declarations for every entry. */
export function packageBuild(entry: Record<string, string>, overrides: Options = {}): Options {
  return {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    splitting: false,
    treeshake: true,
    ...overrides,
  };
}
