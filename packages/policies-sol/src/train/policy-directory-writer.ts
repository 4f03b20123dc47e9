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
import { encodeSolPolicy, SOL_TENSORS_FILE, type SolTrained } from '../policy/sol-directory';
import { solProvider } from '../policy/sol-provider';

/**
 * Writes a SOL policy directory that `solProvider` loads: `controller.safetensors` and
 * `policy.json` (`"provider": "sol"`, `options`, and `parameters` from `encodeSolPolicy`: the
 * controller's config, the action levels, the base model's sizes and the tensors file), each
 * atomically, the manifest last. Creates `dir` when missing.
 *
 * @param options the options to record (e.g. the `horizon` it was trained for); a user's options
 *   override them key by key.
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `solProvider` refuses; as
 *   `encodeSolPolicy`.
 */
export async function writeSolPolicyDirectory(
  dir: string,
  trained: SolTrained,
  options: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  parsePolicyOptions(solProvider.options, options);
  const encoded = encodeSolPolicy(trained);
  const manifest = formatPolicyManifest({
    format: POLICY_FORMAT,
    version: POLICY_FORMAT_VERSION,
    provider: solProvider.name,
    options: { ...options },
    parameters: { ...encoded.parameters },
  });
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, SOL_TENSORS_FILE), encoded.tensors);
  await writeFileAtomic(join(dir, POLICY_MANIFEST), manifest);
}
