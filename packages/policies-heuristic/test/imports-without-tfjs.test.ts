import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadFormat, modulesLoadedBy } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// The built packages (turbo builds this package and its dependencies before its tests), loaded
// by a bare `node` from this package's directory, as an embedding runtime would load them.
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const formats: LoadFormat[] = ['esm', 'cjs'];
const tfjs = (modules: readonly string[]) => modules.filter((m) => m.includes('@tensorflow'));

describe('importing without tfjs', () => {
  it.each(['@lethe/core', '@lethe/kv-cache', '@lethe/policies-heuristic'])(
    '%s loads no @tensorflow module (ESM and CJS)',
    (specifier) => {
      for (const format of formats) {
        const { exports, modules } = modulesLoadedBy(specifier, pkg, format);
        expect(exports).toBeGreaterThan(0);
        expect(tfjs(modules)).toEqual([]);
      }
    },
  );

  it('sees tfjs where it is: @lethe/tensor loads @tensorflow modules (ESM and CJS)', () => {
    for (const format of formats) {
      expect(tfjs(modulesLoadedBy('@lethe/tensor', pkg, format).modules)).not.toEqual([]);
    }
  });
});
