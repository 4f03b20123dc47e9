import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NGC_RUN_FILE } from '../src/run-file';
import { ngcRunManifest, prepareRunForEvaluation } from '../src/run-policy';
import { DEFAULT_TRAIN_SETTINGS } from '../src/train-settings';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'lethe-run-policy-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function runDir(name: string, changes: Record<string, unknown>): Promise<string> {
  const dir = join(root, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const settings = { ...DEFAULT_TRAIN_SETTINGS, model: 'm', variant: 'ngc', ...changes };
  await writeFile(join(dir, NGC_RUN_FILE), JSON.stringify({ settings }));
  return dir;
}

describe('prepareRunForEvaluation', () => {
  it('writes the policy manifest of a run recorded before train wrote it, once', async () => {
    const dir = await runDir('old', { window: 5 });
    expect(await prepareRunForEvaluation('old', dir, 16)).toBe(true);
    const manifest = JSON.parse(await readFile(join(dir, 'policy.json'), 'utf8'));
    expect(manifest).toEqual(ngcRunManifest({ ...DEFAULT_TRAIN_SETTINGS, window: 5 }));
    expect(manifest).toMatchObject({ provider: 'ngc', model: '.', options: { window: 5 } });
    expect(await prepareRunForEvaluation('old', dir, 16)).toBe(false);
  });

  it('tells the harness how an interoception run’s prompts carry the tag', async () => {
    const tagged = await runDir('tagged', { interoception: true, tagTokens: 'markup' });
    expect(await prepareRunForEvaluation('t', tagged, 16)).toBe(true);
    const manifest = JSON.parse(await readFile(join(tagged, 'policy.json'), 'utf8'));
    expect(manifest.options.interoception).toBe('markup');
    // Runs recorded before the tag setting existed spelt it out.
    const { tagTokens: _, ...old } = { ...DEFAULT_TRAIN_SETTINGS, interoception: true };
    expect(ngcRunManifest(old).options.interoception).toBe('characters');
  });

  it('refuses a run of another cadence and a directory that is not a run', async () => {
    const other = await runDir('other', { cadence: 32 });
    await expectLetheRejection(prepareRunForEvaluation('x', other, 16), 'E_ARG', '--run x');
    await expectLetheRejection(prepareRunForEvaluation('n', root, 16), 'E_ARG', '--run n');
  });
});
