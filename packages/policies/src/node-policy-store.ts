import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unreadableFile } from '@lethe/core';
import { openPolicyDirectory } from '@lethe/kv-cache';
import { readModelDirectory } from '@lethe/model/node';
import type { PolicyStore } from './policy-store';

/**
 * A {@link PolicyStore} over the file system: a policy directory is a folder holding
 * `policy.json` and the files it names; a model a manifest names (relative to that folder) is a
 * checkpoint directory as `readModelDirectory` reads it (`config.json` + `model.safetensors`,
 * `tokenizer.json` when present). A file that cannot be read (missing, a directory, no permission)
 * is `E_CHECKPOINT` naming its path and why.
 */
export function nodePolicyStore(): PolicyStore {
  return {
    open: (dir) =>
      openPolicyDirectory({
        location: dir,
        readText: async (name) => new TextDecoder().decode(await readPolicyFile(join(dir, name))),
        readBytes: (name) => readPolicyFile(join(dir, name)),
      }),
    loadModel: async (dir, model) => {
      const loaded = await readModelDirectory(join(dir, model), { tokenizer: 'optional' });
      return loaded.tokenizer === undefined
        ? { model: loaded.model }
        : { model: loaded.model, tokenizer: loaded.tokenizer };
    },
  };
}

/** The bytes of `path`; a file-system error names the file (`unreadableFile`). */
async function readPolicyFile(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    throw unreadableFile(path, error);
  }
}
