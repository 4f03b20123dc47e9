import { assertInteger, LetheError } from '@lethe/core';
import { BYTE_TO_CHAR, byteLevelChars } from './byte-level';
import { preTokenize, type SplitPattern } from './split-pattern';

/** A byte-level BPE vocabulary: tokens in id order and the merges in rank order. */
export interface BpeModel {
  /** Token of each id: the 256 byte characters (in byte order), then the merged tokens. */
  readonly vocab: readonly string[];
  /** The merges, rank 0 first: each joins two adjacent tokens into one. */
  readonly merges: readonly (readonly [string, string])[];
}

/** How the trainer reads its corpus. */
export interface BpeTrainingOptions {
  /** How many merges to learn. */
  readonly merges: number;
  /** The pre-tokenizer's split. */
  readonly pattern: SplitPattern;
  /** Unicode normalisation applied first (`NFC` for Qwen2), if any. */
  readonly normalization?: 'NFC';
}

/**
 * Learns byte-level BPE merges from `corpus`, deterministically: the text is normalised,
 * split into pieces by the pre-tokenizer's pattern, each piece written as byte characters;
 * then, `merges` times, the most frequent adjacent pair of tokens over all pieces (weighted by
 * how often each piece occurs) is merged everywhere. Ties go to the pair whose first token, then
 * second token, comes first in code-unit order. A merged token that already exists (two merges
 * can spell the same string) keeps its id.
 *
 * @throws LetheError `E_ARG` naming `merges` when it is not an integer ≥ 0, or when fewer than
 *   `merges` pairs occur at least twice; naming `corpus` when it is not a string.
 * @example
 * ```ts
 * const bpe = trainBpe('the sky is blue. the sky is grey.', { merges: 8, pattern: QWEN2_PATTERN });
 * // bpe.vocab: the 256 byte characters, then 'Ġs', 'Ġt', … ; bpe.merges: 8 pairs
 * ```
 */
export function trainBpe(corpus: string, options: BpeTrainingOptions): BpeModel {
  if (typeof corpus !== 'string') throw new LetheError('E_ARG', 'must be a string', 'corpus');
  assertInteger(options.merges, 'merges', 0);
  const text = options.normalization === 'NFC' ? corpus.normalize('NFC') : corpus;
  const counts = new Map<string, number>();
  for (const piece of preTokenize(text, options.pattern)) {
    counts.set(piece, (counts.get(piece) ?? 0) + 1);
  }
  const words = [...counts.entries()].map(([piece, count]) => ({
    tokens: byteLevelChars(piece),
    count,
  }));
  const vocab = [...BYTE_TO_CHAR];
  const known = new Set(vocab);
  const merges: [string, string][] = [];
  while (merges.length < options.merges) {
    const pairs = new Map<string, { pair: [string, string]; count: number }>();
    for (const { tokens, count } of words) {
      for (let i = 0; i + 1 < tokens.length; i++) {
        const key = `${tokens[i]} ${tokens[i + 1]}`;
        const entry = pairs.get(key);
        if (entry === undefined) pairs.set(key, { pair: [tokens[i]!, tokens[i + 1]!], count });
        else entry.count += count;
      }
    }
    let best: { pair: [string, string]; count: number } | undefined;
    for (const entry of pairs.values()) {
      if (best === undefined || entry.count > best.count) best = entry;
      else if (entry.count === best.count && comparePairs(entry.pair, best.pair) < 0) best = entry;
    }
    if (best === undefined || best.count < 2) {
      throw new LetheError(
        'E_ARG',
        `asks for ${options.merges}, but the corpus has only ${merges.length} pairs that occur twice or more`,
        'merges',
      );
    }
    const [left, right] = best.pair;
    merges.push([left, right]);
    const merged = left + right;
    if (!known.has(merged)) {
      known.add(merged);
      vocab.push(merged);
    }
    for (const word of words) word.tokens = mergePair(word.tokens, left, right);
  }
  return { vocab, merges };
}

/**
 * The tokens of one pre-tokenized piece (as byte characters) under `merges`, applied as BPE
 * defines it: repeatedly join every occurrence, left to right, of the adjacent pair of lowest
 * rank, until no adjacent pair is a merge. With `ignoreMerges` (Llama 3), a piece that is a
 * token of `vocab` as a whole is that token.
 */
export function applyMerges(
  piece: string,
  model: BpeModel,
  options: { readonly ignoreMerges?: boolean } = {},
): string[] {
  const chars = byteLevelChars(piece);
  if (options.ignoreMerges && model.vocab.includes(chars.join(''))) return [chars.join('')];
  const ranks = new Map(model.merges.map(([a, b], rank) => [`${a} ${b}`, rank]));
  let tokens = chars;
  for (;;) {
    let bestRank = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < tokens.length; i++) {
      bestRank = Math.min(bestRank, ranks.get(`${tokens[i]} ${tokens[i + 1]}`) ?? bestRank);
    }
    if (bestRank === Number.POSITIVE_INFINITY) return tokens;
    const [left, right] = model.merges[bestRank]!;
    tokens = mergePair(tokens, left, right);
  }
}

/** `tokens` with every occurrence of `left right`, left to right, joined. */
function mergePair(tokens: string[], left: string, right: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (i + 1 < tokens.length && tokens[i] === left && tokens[i + 1] === right) {
      out.push(left + right);
      i++;
    } else {
      out.push(tokens[i]!);
    }
  }
  return out;
}

function comparePairs(a: readonly [string, string], b: readonly [string, string]): number {
  return compareStrings(a[0], b[0]) || compareStrings(a[1], b[1]);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
