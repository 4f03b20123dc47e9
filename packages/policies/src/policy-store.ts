import type { PolicyDirectory } from '@lethe/kv-cache';
import type { DecoderModel, Tokenizer } from '@lethe/model';

/**
 * Where the cells of learned policies get their files: policy directories and the model
 * checkpoints their manifests name (NGC's policy is its RL-trained model). In Node,
 * `nodePolicyStore()` of `@lethe/policies/node` reads them from disk; a browser passes
 * `filesPolicyStore` over `ModelFiles` of `@lethe/model` (a server's URLs, picked files).
 */
export interface PolicyStore {
  /** Opens the policy directory `dir` (reads and checks its `policy.json`). */
  open(dir: string): Promise<PolicyDirectory>;
  /**
   * Loads the model checkpoint `model` named by the manifest of policy directory `dir`, with its
   * tokenizer when the checkpoint has one.
   */
  loadModel(dir: string, model: string): Promise<PolicyModel>;
}

/** A model a policy directory names, and its tokenizer (a policy's model may extend the task's). */
export interface PolicyModel {
  readonly model: DecoderModel;
  readonly tokenizer?: Tokenizer;
}
