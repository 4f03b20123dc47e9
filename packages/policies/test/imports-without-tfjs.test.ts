import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadFormat, modulesLoadedBy } from '@lethe/test-utils';
import { expect, it } from 'vitest';

// The built registry, loaded by a bare `node` as a server or an embedding runtime would load it:
// every policy package's main entry, and not one tfjs module (GSA's gate comes in a chunk its
// provider loads when it prepares a policy; SOL's and NGC's tensor code is in their `/train`).
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const formats: LoadFormat[] = ['esm', 'cjs'];

it('importing @lethe/policies loads no @tensorflow module (ESM and CJS)', () => {
  for (const format of formats) {
    const { exports, modules } = modulesLoadedBy('@lethe/policies', pkg, format);
    expect(exports).toBeGreaterThan(0);
    expect(modules.filter((m) => m.includes('@tensorflow'))).toEqual([]);
  }
});
