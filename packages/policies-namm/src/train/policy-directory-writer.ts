import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  formatPolicyManifest,
  POLICY_FORMAT,
  POLICY_FORMAT_VERSION,
  POLICY_MANIFEST,
  parsePolicyOptions,
} from '@lethe/kv-cache';
import { writeFileAtomic } from '@lethe/model/node';
import {
  encodeNammParameters,
  NAMM_TENSORS_FILE,
  type NammParameters,
} from '../policy/namm-parameters';
import { nammProvider } from '../policy/namm-provider';

/** The NAMM options a policy directory records (those of `nammProvider`): what it was evolved with. */
export interface NammManifestOptions {
  /** Tokens between NAMM rounds. */
  readonly updateInterval?: number;
  /** Entries scoring below it are evicted. */
  readonly threshold?: number;
  /** The reference code's equal-length heads. */
  readonly equalHeads?: boolean;
}

/**
 * Writes a NAMM policy directory that `nammProvider` loads: `namm.safetensors` (the genome and
 * the normalisation, `encodeNammParameters`) and `policy.json` (`"provider": "namm"`, `options`
 * and the `parameters` naming the scorer, the features and the tensors file), each atomically,
 * the manifest last. Creates `dir` when missing.
 *
 * @param options the options it was evolved with; a user's options override them key by key.
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `nammProvider` refuses, or
 *   the parameter at fault (see `checkNammParameters`).
 */
export async function writeNammPolicyDirectory(
  dir: string,
  parameters: NammParameters,
  options: NammManifestOptions = {},
): Promise<void> {
  parsePolicyOptions(nammProvider.options, options);
  const encoded = encodeNammParameters(parameters);
  const manifest = formatPolicyManifest({
    format: POLICY_FORMAT,
    version: POLICY_FORMAT_VERSION,
    provider: nammProvider.name,
    options: { ...options },
    parameters: encoded.parameters,
  });
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, NAMM_TENSORS_FILE), encoded.tensors);
  await writeFileAtomic(join(dir, POLICY_MANIFEST), manifest);
}
