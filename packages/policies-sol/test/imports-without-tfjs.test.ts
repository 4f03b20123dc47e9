import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadFormat, modulesLoadedBy } from '@lethe/test-utils';
import { describe, expect, it } from 'vitest';

// The built package (turbo builds it before its tests), loaded by a bare `node` from its own
// directory, as an embedding runtime would load it.
const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const formats: LoadFormat[] = ['esm', 'cjs'];
/** Modules of tfjs or of the packages only a trainer needs (installed or workspace paths). */
const heavy = (modules: readonly string[]) =>
  modules.filter((m) => /@tensorflow|(@lethe|packages)[/\\](model|rl-grpo|tensor)[/\\]/.test(m));

describe('importing the inference entry', () => {
  it('@lethe/policies-sol loads no tfjs, model, rl-grpo or tensor module (ESM and CJS)', () => {
    for (const format of formats) {
      const { exports, modules } = modulesLoadedBy('@lethe/policies-sol', pkg, format);
      expect(exports).toBeGreaterThan(0);
      expect(heavy(modules)).toEqual([]);
    }
  });

  it('@lethe/policies-sol/train does load tfjs (the check above can see it)', () => {
    for (const format of formats) {
      const { modules } = modulesLoadedBy('@lethe/policies-sol/train', pkg, format);
      expect(heavy(modules).length).toBeGreaterThan(0);
    }
  });
});
