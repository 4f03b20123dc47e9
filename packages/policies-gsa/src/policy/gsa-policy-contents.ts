import { type PolicyDirectoryContents, policyContents } from '@lethe/kv-cache';
import type { GsaGateParameters } from '../gate/gate-parameters';
import { encodeGsaParameters } from '../gate/gate-safetensors';
import { gsaProvider } from './gsa-provider';

/** What a GSA policy directory records besides the gate: its anchors and its base model. */
export interface GsaPolicyRecord {
  /** The anchors to record (`gsaProvider`'s `sinks`, `window`); a user's options override them. */
  readonly options?: { readonly sinks?: number; readonly window?: number };
  /** `modelIdentity` of the backbone the gate was trained on (`@lethe/model`). */
  readonly baseModel?: string;
}

/**
 * The policy directory of a trained GSA gate, as `gsaProvider` loads it: `gates.safetensors`
 * (`encodeGsaParameters`) and a manifest with `"provider": "gsa"`, the options, the parameters
 * (granularity, shape, tensors file) and the base model. Write it with `writePolicyDirectory` of
 * `@lethe/model/node`, or serve it from memory with `memoryPolicyDirectory`.
 *
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `gsaProvider` refuses, or the
 *   parameter at fault (see `checkGateParameters`); `E_FORMAT` naming `contents.manifest` for a malformed `baseModel`.
 */
export function gsaPolicyContents(
  parameters: GsaGateParameters,
  record: GsaPolicyRecord = {},
): PolicyDirectoryContents {
  const encoded = encodeGsaParameters(parameters);
  return policyContents(gsaProvider, {
    ...record,
    parameters: { ...encoded.parameters },
    files: { [encoded.parameters.tensors]: encoded.tensors },
  });
}
