import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { LetheError } from '@lethe/core';
import type { DecoderModel } from '../decoder/decoder-model';
import {
  type ModelDirectory,
  type ReadModelDirectoryOptions,
  readModelFiles,
} from '../directory/read-model-files';
import {
  type CharTokenizer,
  HfTokenizer,
  TOKENIZER_CONFIG_FILE,
  TOKENIZER_FILE,
} from '../tokenizer/index';
import { CONFIG_FILE, WEIGHTS_FILE } from './checkpoint';
import { saveCheckpoint } from './checkpoint-files';
import { writeFileAtomic } from './node-fs';
import { assertDirectory, nodeModelFiles } from './node-model-files';

/**
 * Reads the model directory `dir` on disk: {@link readModelFiles} over {@link nodeModelFiles},
 * after checking that `dir` is a directory.
 *
 * @throws LetheError `E_CHECKPOINT` naming `dir` when it is missing or not a directory;
 *   {@link readModelFiles}'s errors, naming the files by their paths.
 */
export async function readModelDirectory(
  dir: string,
  options: ReadModelDirectoryOptions = {},
): Promise<ModelDirectory> {
  await assertDirectory(dir);
  return readModelFiles(nodeModelFiles(dir), options);
}

/** The files {@link writeModelDirectory} writes besides the weights and config. */
export interface ModelDirectoryContents {
  readonly model: DecoderModel;
  /**
   * Written as `tokenizer.json`: a character tokenizer in Lethe's form, or a Hugging Face one as
   * its `tokenizer.json` and `tokenizer_config.json`.
   */
  readonly tokenizer: CharTokenizer | HfTokenizer;
  /** Further JSON files by name (e.g. `lethe-model.json`), written after the others. */
  readonly json?: Readonly<Record<string, unknown>>;
}

/**
 * Writes a model directory as a whole: `config.json` + `model.safetensors` (F32, bit-exact),
 * `tokenizer.json` (with `tokenizer_config.json` for a Hugging Face tokenizer) and the extra JSON
 * files go into a fresh sibling directory first, each
 * written atomically; that directory then replaces `dir` by renames, so a reader sees the
 * old directory or the complete new one, never a mix. An existing `dir` is replaced only when
 * it is empty or holds only files a model directory holds (a safeguard against overwriting
 * an unrelated folder).
 *
 * @throws LetheError `E_ARG` naming `dir` when it exists and is not a model directory.
 */
export async function writeModelDirectory(
  dir: string,
  contents: ModelDirectoryContents,
): Promise<void> {
  const extra = Object.keys(contents.json ?? {});
  const tokenizerFiles = tokenizerFilesOf(contents.tokenizer);
  const own = new Set([CONFIG_FILE, WEIGHTS_FILE, ...Object.keys(tokenizerFiles), ...extra]);
  const existing = await listDirectory(dir);
  if (existing !== undefined) {
    const foreign = existing.filter((name) => !own.has(name));
    if (foreign.length > 0) {
      throw new LetheError(
        'E_ARG',
        `exists and holds files a model directory does not (${foreign.slice(0, 5).join(', ')}); choose another output directory`,
        dir,
      );
    }
  }
  const suffix = randomBytes(6).toString('hex');
  const staging = join(dirname(dir), `.${basename(dir)}.partial-${suffix}`);
  await mkdir(dirname(dir), { recursive: true });
  try {
    await saveCheckpoint(staging, {
      config: contents.model.config,
      tensors: contents.model.toTensors(),
    });
    for (const [name, value] of Object.entries({ ...tokenizerFiles, ...contents.json })) {
      await writeFileAtomic(join(staging, name), `${JSON.stringify(value, null, 2)}\n`);
    }
    if (existing === undefined) {
      await rename(staging, dir);
    } else {
      const old = join(dirname(dir), `.${basename(dir)}.old-${suffix}`);
      await rename(dir, old);
      await rename(staging, dir);
      await rm(old, { recursive: true, force: true });
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/** The tokenizer's files by name: `tokenizer.json`, and `tokenizer_config.json` for a Hugging Face one. */
function tokenizerFilesOf(tokenizer: CharTokenizer | HfTokenizer): Record<string, unknown> {
  if (!(tokenizer instanceof HfTokenizer)) return { [TOKENIZER_FILE]: tokenizer.toJSON() };
  const { tokenizer: json, config } = tokenizer.toJSON();
  return { [TOKENIZER_FILE]: json, [TOKENIZER_CONFIG_FILE]: config };
}

/** Entries of `dir`, or `undefined` when it does not exist. */
async function listDirectory(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new LetheError('E_ARG', 'exists and is not a directory', dir);
    }
    throw error;
  }
}
