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
import type { GsaGateParameters } from '../gate/gate-parameters';
import { encodeGsaParameters, GSA_TENSORS_FILE } from '../gate/gate-safetensors';
import { gsaProvider } from '../policy/gsa-provider';

/** The GSA options a policy directory records (those of `gsaProvider`): its anchors. */
export interface GsaManifestOptions {
  /** Attention sinks always kept. */
  readonly sinks?: number;
  /** Most recent entries always kept. */
  readonly window?: number;
}

/**
 * Writes a GSA policy directory that `gsaProvider` loads: `gates.safetensors`
 * (`encodeGsaParameters`) and `policy.json` (`"provider": "gsa"`, `options`, and `parameters`
 * with the granularity, the shape and the tensors file), each atomically, the manifest last.
 * Creates `dir` when missing.
 *
 * @param options the anchors to record; a user's options override them key by key.
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `gsaProvider` refuses, or the
 *   parameter at fault (see `checkGateParameters`).
 */
export async function writeGsaPolicyDirectory(
  dir: string,
  parameters: GsaGateParameters,
  options: GsaManifestOptions = {},
): Promise<void> {
  parsePolicyOptions(gsaProvider.options, options);
  const encoded = encodeGsaParameters(parameters);
  const manifest = formatPolicyManifest({
    format: POLICY_FORMAT,
    version: POLICY_FORMAT_VERSION,
    provider: gsaProvider.name,
    options: { ...options },
    parameters: { ...encoded.parameters },
  });
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, GSA_TENSORS_FILE), encoded.tensors);
  await writeFileAtomic(join(dir, POLICY_MANIFEST), manifest);
}
