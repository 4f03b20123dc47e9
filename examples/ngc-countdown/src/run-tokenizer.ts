import type { CharTokenizer } from '@lethe/model';
import type { TagForm } from '@lethe/policies-ngc';
import { interoceptionTokenizer } from '@lethe/policies-ngc/train';

/** How a recorded run tokenized its tag (runs recorded before the setting existed: `characters`). */
export function recordedTagTokens(settings: { readonly tagTokens?: TagForm }): TagForm {
  return settings.tagTokens ?? 'characters';
}

/**
 * The tokenizer a finished run used, rebuilt from the plain alphabet its directory saved (a
 * markup-tag run reads the tag's markup as tokens again).
 */
export function runTokenizer(
  saved: CharTokenizer,
  settings: { readonly interoception?: boolean; readonly tagTokens?: TagForm },
): CharTokenizer {
  return settings.interoception === true
    ? interoceptionTokenizer(saved, recordedTagTokens(settings))
    : saved;
}
