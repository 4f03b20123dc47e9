import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadFormat, modulesLoadedBy } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// The built package, loaded by a bare `node` from this package's directory, as an embedding
// runtime would load it: the gate's tfjs code is a chunk the provider loads when it prepares a
// policy, not part of the import.
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const formats: LoadFormat[] = ['esm', 'cjs'];
const tfjs = (modules: readonly string[]) => modules.filter((m) => m.includes('@tensorflow'));

describe('importing @lethe/policies-gsa', () => {
  it('loads no @tensorflow module (ESM and CJS)', () => {
    for (const format of formats) {
      const { exports, modules } = modulesLoadedBy('@lethe/policies-gsa', pkg, format);
      expect(exports).toBeGreaterThan(0);
      expect(tfjs(modules)).toEqual([]);
    }
  });

  it('while its trainer entry, which exports the tfjs gate, does', () => {
    for (const format of formats) {
      const { modules } = modulesLoadedBy('@lethe/policies-gsa/train', pkg, format);
      expect(tfjs(modules)).not.toEqual([]);
    }
  });
});
