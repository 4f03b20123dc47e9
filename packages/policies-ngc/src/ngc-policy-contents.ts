import { type PolicyDirectoryContents, policyContents } from '@lethe/kv-cache';
import { ngcProvider } from './ngc-provider';

/** What an NGC policy directory records: the options it was trained with and its base model. */
export interface NgcPolicyRecord {
  /**
   * The options the run was trained with (`ngcProvider`'s: `blockSize`, `window`, `logits`,
   * `interoception`); a user's options override them key by key.
   */
  readonly options?: Readonly<Record<string, unknown>>;
  /**
   * `modelIdentity` of the run's own RL-trained model (`@lethe/model`): the model the policy is
   * and runs on, checked when a harness or the CLI loads it from the directory.
   */
  readonly baseModel?: string;
}

/**
 * The manifest of an NGC run's policy directory: `"provider": "ngc"`, the options, and the run's
 * own RL-trained model (`"model": "."`: the directory is also a model directory, its weights
 * written by the trainer beside `policy.json`). No other files: NGC's policy is the model. Write
 * it with `writePolicyDirectory` of `@lethe/model/node`.
 *
 * @throws LetheError `E_ARG` naming `options.<key>` for an option `ngcProvider` refuses;
 *   `E_FORMAT` naming `contents.manifest` for a malformed `baseModel`.
 */
export function ngcPolicyContents(record: NgcPolicyRecord = {}): PolicyDirectoryContents {
  return policyContents(ngcProvider, { ...record, model: '.' });
}

/**
 * NGC's test directory for the shared policy matrix (`policyMatrixCases` of
 * `@lethe/model/testing`): blocks of 2 scored by a window of 2 queries. The matrix runs the
 * policy on its own model, as a harness runs an NGC directory on the model it names.
 */
export function ngcMatrixFixture(): PolicyDirectoryContents {
  return ngcPolicyContents({ options: { blockSize: 2, window: 2 } });
}
