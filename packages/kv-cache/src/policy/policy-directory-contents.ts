import { LetheError } from '@lethe/core';
import {
  checkPolicyManifest,
  POLICY_FORMAT,
  POLICY_FORMAT_VERSION,
  POLICY_MANIFEST,
  type PolicyDirectory,
  type PolicyManifest,
} from './policy-directory';
import { parsePolicyOptions } from './policy-options';
import type { AnyPolicyProvider } from './provider';

/**
 * Everything a policy directory holds, in memory: its manifest and the files the manifest names
 * (e.g. a safetensors file of learned parameters). What a learned method's trainer produces
 * (`gsaPolicyContents`, `nammPolicyContents`, …), what `writePolicyDirectory` of
 * `@lethe/model/node` writes, and what {@link memoryPolicyDirectory} serves without a file system
 * (a policy bundled with an app, a test fixture).
 */
export interface PolicyDirectoryContents {
  readonly manifest: PolicyManifest;
  /** File name (relative to the directory) → bytes; never `policy.json` itself. */
  readonly files: Readonly<Record<string, Uint8Array>>;
}

/**
 * Checks `contents`: a valid manifest, and files named by plain relative names (no `policy.json`,
 * no `/`, `\`, `..`, empty name) holding bytes.
 *
 * @throws LetheError `E_FORMAT` naming `argument` (or `argument.manifest`) for a bad manifest;
 *   `E_ARG` naming `argument.files` for a bad file name or content.
 */
export function checkPolicyContents(
  contents: PolicyDirectoryContents,
  argument = 'contents',
): PolicyDirectoryContents {
  if (typeof contents !== 'object' || contents === null) {
    throw new LetheError('E_ARG', 'must be an object with a manifest and files', argument);
  }
  checkPolicyManifest(contents.manifest, `${argument}.manifest`);
  const files = contents.files;
  if (typeof files !== 'object' || files === null || Array.isArray(files)) {
    throw new LetheError('E_ARG', 'must map file names to bytes', `${argument}.files`);
  }
  for (const [name, bytes] of Object.entries(files)) {
    const plain =
      name.length > 0 &&
      name !== POLICY_MANIFEST &&
      !/[/\\]/.test(name) &&
      name !== '.' &&
      name !== '..';
    if (!plain) {
      throw new LetheError(
        'E_ARG',
        `"${name}" is not a file name of its own (no path separators, not ${POLICY_MANIFEST})`,
        `${argument}.files`,
      );
    }
    if (!(bytes instanceof Uint8Array)) {
      throw new LetheError('E_ARG', `"${name}" must hold a Uint8Array`, `${argument}.files`);
    }
  }
  return contents;
}

/**
 * A policy directory served from memory (checked as {@link checkPolicyContents}): what a
 * registry's `prepare` loads a learned provider from when its files are not on a disk or server.
 *
 * @param location where the contents come from, for messages (default `memory:<provider>`).
 * @example
 * ```ts
 * const directory = memoryPolicyDirectory(nammPolicyContents(parameters));
 * const prepared = await registry.prepare('namm', { directory });
 * ```
 */
export function memoryPolicyDirectory(
  contents: PolicyDirectoryContents,
  location = `memory:${contents?.manifest?.provider}`,
): PolicyDirectory {
  const { manifest, files } = checkPolicyContents(contents);
  const read = async (name: string): Promise<Uint8Array> => {
    const bytes = name === POLICY_MANIFEST ? undefined : files[name];
    if (bytes === undefined) {
      throw new LetheError(
        'E_CHECKPOINT',
        `${location} has no file ${name}`,
        `${location}/${name}`,
      );
    }
    return bytes;
  };
  return {
    files: {
      location,
      readText: async (name) => new TextDecoder().decode(await read(name)),
      readBytes: read,
    },
    manifest,
  };
}

/** What {@link policyContents} assembles a directory from, besides the provider. */
export interface PolicyContentsFields {
  /** The options to record; checked against the provider's schema. */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Provider-specific configuration (sizes, the tensors file's name, …). */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** The model checkpoint a policy that is a model carries, relative to the directory. */
  readonly model?: string;
  /** `modelIdentity` of the model the policy runs on (`@lethe/model`). */
  readonly baseModel?: string;
  /** The files beside the manifest. */
  readonly files?: Readonly<Record<string, Uint8Array>>;
}

/**
 * The contents of a policy directory `provider` loads: a current-format manifest naming it, with
 * `fields`' options (validated by the provider's schema), parameters, model and base model, and
 * the files. What each learned package's `…PolicyContents` builds on.
 *
 * @throws LetheError `E_ARG` naming `options.<key>` for an option the provider refuses; as
 *   {@link checkPolicyContents}.
 */
export function policyContents(
  provider: Pick<AnyPolicyProvider, 'name' | 'options'>,
  fields: PolicyContentsFields,
): PolicyDirectoryContents {
  const options = { ...fields.options };
  parsePolicyOptions(provider.options, options);
  const optional = {
    parameters: fields.parameters,
    model: fields.model,
    baseModel: fields.baseModel,
  };
  return checkPolicyContents({
    manifest: {
      format: POLICY_FORMAT,
      version: POLICY_FORMAT_VERSION,
      provider: provider.name,
      options,
      ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    },
    files: { ...fields.files },
  });
}
