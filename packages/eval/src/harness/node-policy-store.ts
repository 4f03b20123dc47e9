import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openPolicyDirectory } from '@lethe/kv-cache';
import { readModelDirectory } from '../pretrain/model-directory';
import type { PolicyStore } from './policy-store';

/**
 * A {@link PolicyStore} over the file system: a policy directory is a folder holding
 * `policy.json` and the files it names; a model a manifest names (relative to that folder) is a
 * checkpoint directory as `readModelDirectory` reads it (`config.json` + `model.safetensors`,
 * `tokenizer.json` when present).
 */
export function nodePolicyStore(): PolicyStore {
  return {
    open: (dir) =>
      openPolicyDirectory({
        location: dir,
        readText: (name) => readFile(join(dir, name), 'utf8'),
        readBytes: async (name) => new Uint8Array(await readFile(join(dir, name))),
      }),
    loadModel: async (dir, model) => {
      const loaded = await readModelDirectory(join(dir, model), { tokenizer: 'optional' });
      return loaded.tokenizer === undefined
        ? { model: loaded.model }
        : { model: loaded.model, tokenizer: loaded.tokenizer };
    },
  };
}
