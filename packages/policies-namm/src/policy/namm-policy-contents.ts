import { type PolicyDirectoryContents, policyContents } from '@lethe/kv-cache';
import { encodeNammParameters, type NammParameters } from './namm-parameters';
import { nammProvider } from './namm-provider';

/** What a NAMM policy directory records besides the scorer: its options and its base model. */
export interface NammPolicyRecord {
  /** The options it was evolved with (`nammProvider`'s); a user's options override them. */
  readonly options?: {
    readonly updateInterval?: number;
    readonly threshold?: number;
    readonly equalHeads?: boolean;
  };
  /** `modelIdentity` of the model it was evolved on (`@lethe/model`). */
  readonly baseModel?: string;
}

/**
 * The policy directory of an evolved NAMM, as `nammProvider` loads it: `namm.safetensors` (the
 * genome and the normalisation, `encodeNammParameters`) and a manifest with `"provider":
 * "namm"`, the options, the parameters (scorer, features, tensors file) and the base model.
 * Write it with `writePolicyDirectory` of `@lethe/model/node`, or serve it from memory with
 * `memoryPolicyDirectory`.
 *
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `nammProvider` refuses, or the
 *   parameter at fault (see `checkNammParameters`); `E_FORMAT` naming `contents.manifest` for a malformed `baseModel`.
 */
export function nammPolicyContents(
  parameters: NammParameters,
  record: NammPolicyRecord = {},
): PolicyDirectoryContents {
  const encoded = encodeNammParameters(parameters);
  return policyContents(nammProvider, {
    ...record,
    parameters: { ...encoded.parameters },
    files: { [encoded.parameters.tensors]: encoded.tensors },
  });
}
