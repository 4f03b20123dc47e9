import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CharTokenizer, DecoderModel, defaultConfig, modelIdentity } from '@lethe/model';
import { readPolicyDirectory, writeModelDirectory } from '@lethe/model/node';
import { ngcPolicyContents } from '@lethe/policies-ngc';
import { initBackend } from '@lethe/tensor';
import { expectLetheRejection } from '@lethe/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NGC_RUN_FILE } from '../src/run-file';
import { prepareRunForEvaluation } from '../src/run-policy';
import { DEFAULT_TRAIN_SETTINGS } from '../src/train-settings';

let root: string;
/** The weights of every run here, and their identity. */
let model: DecoderModel;
let identity: string;
const tokenizer = CharTokenizer.fromText('abcd');

beforeAll(async () => {
  await initBackend('wasm');
  root = await mkdtemp(join(tmpdir(), 'lethe-run-policy-'));
  model = DecoderModel.random(
    defaultConfig({
      model_type: 'llama',
      vocab_size: tokenizer.vocabSize,
      hidden_size: 8,
      intermediate_size: 16,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
    }),
    1,
  );
  identity = await modelIdentity(model);
});
afterAll(async () => {
  model.dispose();
  await rm(root, { recursive: true, force: true });
});

/** A finished run recorded before `train` wrote `policy.json`: its model and run file. */
async function runDir(name: string, changes: Record<string, unknown>): Promise<string> {
  const dir = join(root, name);
  const settings = { ...DEFAULT_TRAIN_SETTINGS, model: 'm', variant: 'ngc', ...changes };
  await writeModelDirectory(dir, { model, tokenizer, json: { [NGC_RUN_FILE]: { settings } } });
  return dir;
}

describe('prepareRunForEvaluation', () => {
  it('writes the policy manifest of a run recorded before train wrote it, once, for its model', async () => {
    const dir = await runDir('old', { window: 5 });
    expect(await prepareRunForEvaluation('old', dir, 16)).toBe(true);
    const { blockSize, logits } = DEFAULT_TRAIN_SETTINGS;
    const { manifest } = await readPolicyDirectory(dir);
    expect(manifest).toEqual(
      ngcPolicyContents({ options: { blockSize, window: 5, logits }, baseModel: identity })
        .manifest,
    );
    expect(manifest).toMatchObject({ provider: 'ngc', model: '.', baseModel: identity });
    expect(await prepareRunForEvaluation('old', dir, 16)).toBe(false);
  });

  it('tells the harness how an interoception run’s prompts carry the tag', async () => {
    const tagged = await runDir('tagged', { interoception: true, tagTokens: 'markup' });
    expect(await prepareRunForEvaluation('t', tagged, 16)).toBe(true);
    expect((await readPolicyDirectory(tagged)).manifest.options.interoception).toBe('markup');
    // Runs recorded before the tag setting existed spelt it out.
    const { tagTokens: _, ...old } = { ...DEFAULT_TRAIN_SETTINGS, interoception: true };
    const spelt = join(root, 'spelt');
    await writeModelDirectory(spelt, {
      model,
      tokenizer,
      json: { [NGC_RUN_FILE]: { settings: old } },
    });
    expect(await prepareRunForEvaluation('s', spelt, 16)).toBe(true);
    expect((await readPolicyDirectory(spelt)).manifest.options.interoception).toBe('characters');
  });

  it('refuses a run of another cadence, a directory that is not a run and a run without weights', async () => {
    const other = await runDir('other', { cadence: 32 });
    await expectLetheRejection(prepareRunForEvaluation('x', other, 16), 'E_ARG', '--run x');
    await expectLetheRejection(prepareRunForEvaluation('n', root, 16), 'E_ARG', '--run n');
    const bare = join(root, 'bare');
    await mkdir(bare);
    await writeFile(join(bare, NGC_RUN_FILE), JSON.stringify({ settings: DEFAULT_TRAIN_SETTINGS }));
    await expect(prepareRunForEvaluation('b', bare, 16)).rejects.toThrow(
      expect.objectContaining({ code: 'E_CHECKPOINT' }),
    );
    await expect(readFile(join(bare, 'policy.json'))).rejects.toThrow(/ENOENT/);
  });
});
