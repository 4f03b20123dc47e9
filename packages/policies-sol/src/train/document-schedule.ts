import { LetheError, Rng } from '@lethe/core';
import { checkDocument } from './counterfactual-rollout';
import { checkPrefix, longestPrefix, type PrefixRange } from './prefix-range';

/**
 * A training document whose episodes start where it says: `prefix` replaces the trainer's
 * `prefix` for it — e.g. a generation task's prompt followed by the model's answer, with
 * `{ min: prompt length, max: tokens.length − horizon − 1 }`, so that every episode is
 * teacher-forced over the answer with (part of) it and the whole prompt prefilled densely.
 */
export interface PrefixedDocument {
  /** Token ids, at least `longest prefix + horizon + 1`. */
  readonly tokens: Int32Array;
  /** The prefix `P`, or the range each input of this document draws it from. */
  readonly prefix: number | PrefixRange;
}

/** A training document: token ids (episodes start at the trainer's `prefix`) or a {@link PrefixedDocument}. */
export type TrainingDocument = Int32Array | PrefixedDocument;

/**
 * Where a trainer's documents come from: a list, visited in epochs of a seeded shuffle, or a
 * function giving the document of input `index` (0 … B−1) of update `update` (0-based), which
 * must give the same document for the same arguments for runs to repeat and resume.
 */
export type DocumentSource =
  | readonly TrainingDocument[]
  | ((update: number, index: number) => TrainingDocument);

/** A checked document with the prefix its episodes start at. */
export interface ScheduledDocument {
  readonly tokens: Int32Array;
  readonly prefix: number | PrefixRange;
}

/**
 * The document of every input of every update, from a {@link DocumentSource}: for a list, input
 * `b` of update `u` is document `j = u·B + b` of a sequence of epochs, each a fresh permutation
 * of the list drawn from `new Rng(seed).fork('documents-<epoch>')`. Depends only on
 * `(seed, u, b)`, so a resumed run sees the documents an uninterrupted one would.
 */
export class DocumentSchedule {
  private epoch = -1;
  private order: Int32Array = new Int32Array(0);
  private readonly listed: readonly ScheduledDocument[] | undefined;

  /**
   * @param prefix the trainer's prefix, for documents without their own (undefined: none).
   * @param horizon the episode length `T`.
   * @param context the model's context: a document's longest prefix + `T` must fit it.
   * @param vocab the model's vocabulary size.
   * @throws LetheError `E_ARG` naming `documents` when it is neither a non-empty array nor a
   *   function; as {@link scheduledDocument} naming `documents[i]` for a bad listed document.
   */
  constructor(
    private readonly source: DocumentSource,
    private readonly seed: number,
    private readonly batchSize: number,
    private readonly prefix: number | PrefixRange | undefined,
    private readonly horizon: number,
    private readonly context: number,
    private readonly vocab: number,
  ) {
    if (typeof source === 'function') return;
    if (!Array.isArray(source) || source.length === 0) {
      throw new LetheError(
        'E_ARG',
        'must be a non-empty array of documents (Int32Array or { tokens, prefix }) or a function (update, index) => document',
        'documents',
      );
    }
    this.listed = source.map((document, i) => this.check(document, `documents[${i}]`));
  }

  /**
   * The document of input `index` of update `update`.
   *
   * @throws LetheError as {@link scheduledDocument}, naming `documents(update, index)`, when a
   *   function source returns a bad document.
   */
  document(update: number, index: number): ScheduledDocument {
    const { source, listed } = this;
    if (listed === undefined) {
      const from = source as (update: number, index: number) => TrainingDocument;
      return this.check(from(update, index), `documents(${update}, ${index})`);
    }
    const j = update * this.batchSize + index;
    const epoch = Math.floor(j / listed.length);
    if (epoch !== this.epoch) {
      this.order = permutation(listed.length, new Rng(this.seed).fork(`documents-${epoch}`));
      this.epoch = epoch;
    }
    return listed[this.order[j % listed.length]!]!;
  }

  private check(document: TrainingDocument, argument: string): ScheduledDocument {
    return scheduledDocument(document, {
      prefix: this.prefix,
      horizon: this.horizon,
      context: this.context,
      vocab: this.vocab,
      argument,
    });
  }
}

/**
 * Checks one training document and resolves the prefix its episodes start at: its own
 * (`PrefixedDocument.prefix`) or the trainer's.
 *
 * @throws LetheError `E_ARG` naming `argument` for something that is neither an `Int32Array` nor
 *   `{ tokens, prefix }`, for an `Int32Array` when the trainer has no prefix, or `<argument>.tokens` too short for its longest prefix + `T` + 1 or
 *   with ids outside the vocabulary; `<argument>.prefix` (`.min`, `.max`) for a bad prefix or
 *   one whose longest prefix + `T` is past the model's context.
 */
export function scheduledDocument(
  document: TrainingDocument,
  limits: {
    readonly prefix: number | PrefixRange | undefined;
    readonly horizon: number;
    readonly context: number;
    readonly vocab: number;
    readonly argument: string;
  },
): ScheduledDocument {
  const { horizon, context, vocab, argument } = limits;
  if (document instanceof Int32Array) {
    if (limits.prefix === undefined) {
      throw new LetheError(
        'E_ARG',
        'has no prefix of its own and the trainer has none: give { tokens, prefix } or the trainer a prefix',
        argument,
      );
    }
    checkDocument(document, longestPrefix(limits.prefix) + horizon + 1, vocab, argument);
    return { tokens: document, prefix: limits.prefix };
  }
  if (typeof document !== 'object' || document === null || !('tokens' in document)) {
    throw new LetheError(
      'E_ARG',
      'must be an Int32Array of token ids or { tokens, prefix }',
      argument,
    );
  }
  const prefix = checkPrefix(document.prefix, `${argument}.prefix`);
  const longest = longestPrefix(prefix);
  if (longest + horizon > context) {
    throw new LetheError(
      'E_ARG',
      `prefix + horizon = ${longest + horizon} is past the model's context of ${context}`,
      `${argument}.prefix`,
    );
  }
  checkDocument(document.tokens, longest + horizon + 1, vocab, `${argument}.tokens`);
  return { tokens: document.tokens, prefix };
}

/** A uniform permutation of `0 … n−1` (Fisher–Yates with `n` uniforms of `rng`). */
function permutation(n: number, rng: Rng): Int32Array {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  const uniforms = rng.uniform(n);
  for (let i = n - 1; i > 0; i--) {
    const k = Math.min(Math.floor(uniforms[i]! * (i + 1)), i);
    const swap = order[i]!;
    order[i] = order[k]!;
    order[k] = swap;
  }
  return order;
}
