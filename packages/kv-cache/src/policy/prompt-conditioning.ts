/**
 * How a policy conditions the prompt on its budget — NGC's interoception (§5.3): a model trained
 * to read its eviction rate from a tag in the prompt must be given that tag at inference. A
 * runtime that gets one in a `PolicySet` passes every prompt through {@link text} before
 * tokenizing it with the tokenizer of the policy's model.
 */
export interface PromptConditioning {
  /**
   * The text the model sees for `prompt` under the budget the policy was built for (e.g. the
   * prompt with `<eviction_rate>30%</eviction_rate>` appended), in the model's own alphabet.
   */
  text(prompt: string): string;
}
