import { type PolicyDirectoryContents, policyContents } from '@lethe/kv-cache';
import { encodeSolPolicy, type SolTrained } from './sol-directory';
import { solProvider } from './sol-provider';

/** What a SOL policy directory records besides the controller: its options and base model. */
export interface SolPolicyRecord {
  /** Options to record (`solProvider`'s, e.g. the `horizon` it was trained for). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** `modelIdentity` of the frozen LM it was trained on (`@lethe/model`). */
  readonly baseModel?: string;
}

/**
 * The policy directory of a trained SOL controller, as `solProvider` loads it:
 * `controller.safetensors` and a manifest with `"provider": "sol"`, the options, the parameters
 * of `encodeSolPolicy` (the controller's config, the action levels, the base model's sizes, the
 * tensors file) and the base model's identity. Write it with `writePolicyDirectory` of
 * `@lethe/model/node`, or serve it from memory with `memoryPolicyDirectory`.
 *
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `solProvider` refuses; as
 *   `encodeSolPolicy`; `E_FORMAT` naming `contents.manifest` for a malformed `baseModel`.
 */
export function solPolicyContents(
  trained: SolTrained,
  record: SolPolicyRecord = {},
): PolicyDirectoryContents {
  const encoded = encodeSolPolicy(trained);
  return policyContents(solProvider, {
    ...record,
    parameters: { ...encoded.parameters },
    files: { [encoded.parameters.tensors]: encoded.tensors },
  });
}
