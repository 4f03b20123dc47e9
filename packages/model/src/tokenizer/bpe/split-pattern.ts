/** The two pre-tokenizer regexes of the fixtures, as `tokenizer.json` writes them and in JS. */
export interface SplitPattern {
  /** The pattern as Hugging Face's `tokenizer.json` holds it (Rust / Oniguruma syntax). */
  readonly hf: string;
  /** The same pattern as a JavaScript regex (no inline `(?i:…)` group). */
  readonly js: RegExp;
}

const CONTRACTIONS_HF = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
const CONTRACTIONS_JS = "'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])";
const REST = (digits: string) =>
  `|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|${digits}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;

/** Llama 3's split: numbers in groups of up to three digits. */
export const LLAMA3_PATTERN: SplitPattern = {
  hf: CONTRACTIONS_HF + REST('\\p{N}{1,3}'),
  js: new RegExp(CONTRACTIONS_JS + REST('\\p{N}{1,3}'), 'gu'),
};

/** Qwen2's split: one digit per piece. */
export const QWEN2_PATTERN: SplitPattern = {
  hf: CONTRACTIONS_HF + REST('\\p{N}'),
  js: new RegExp(CONTRACTIONS_JS + REST('\\p{N}'), 'gu'),
};

/**
 * The pieces of `text` as a `Split` pre-tokenizer with behaviour `Isolated` cuts it: every match
 * of the pattern, and any text between matches, in order (these patterns match everything).
 */
export function preTokenize(text: string, pattern: SplitPattern): string[] {
  const pieces: string[] = [];
  let at = 0;
  for (const match of text.matchAll(pattern.js)) {
    if (match.index > at) pieces.push(text.slice(at, match.index));
    if (match[0].length > 0) pieces.push(match[0]);
    at = match.index + match[0].length;
  }
  if (at < text.length) pieces.push(text.slice(at));
  return pieces;
}
