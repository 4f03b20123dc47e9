import type { TagForm } from '@lethe/policies-ngc';
import { interoceptionTokenizer } from '@lethe/policies-ngc/train';
import type { TaskTokenizer } from '@lethe/task-models';

/** How a recorded run tokenized its tag (runs recorded before the setting existed: `characters`). */
export function recordedTagTokens(settings: { readonly tagTokens?: TagForm }): TagForm {
  return settings.tagTokens ?? 'characters';
}

/**
 * The tokenizer a finished run used, rebuilt from the one its directory saved: a character
 * tokenizer's saved alphabet reads a markup tag's markup as tokens again; a subword tokenizer is
 * the one saved.
 */
export function runTokenizer(
  saved: TaskTokenizer,
  settings: { readonly interoception?: boolean; readonly tagTokens?: TagForm },
): TaskTokenizer {
  return settings.interoception === true
    ? interoceptionTokenizer(saved, recordedTagTokens(settings))
    : saved;
}
