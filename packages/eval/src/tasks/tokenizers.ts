import { LetheError } from '@lethe/core';
import { CharTokenizer } from '@lethe/model';

/**
 * The fixed alphabet of each task family. Ids follow the string order (after CharTokenizer's
 * four special tokens), so a checkpoint trained on a task keeps its meaning across versions as
 * long as these strings only grow at the end.
 *
 * - `countdown`: digits, `+ - * / = ( )`, the trace separators `;` and space, newline, `:`,
 *   the stop `.`, and the letters of `numbers`, `target`, `answer`.
 * - `arithmetic`: digits, `+ - * / =`, space, newline, `:`, `.`, and the letters of
 *   `compute`, `answer`.
 * - `retrieval`: lower-case letters (filler text, keys), digits (values), space, `.`, `:`,
 *   `?`, newline.
 * - `lm`: lower-case letters, space, `.`, `,`, newline.
 * - `suite`: the retrieval alphabet, then the symbols Countdown adds (`+ - * / = ( ) ;`), so
 *   one model reads every member of the long-context suite.
 */
export const TASK_ALPHABETS = {
  countdown: '0123456789+-*/=() ;:\n.abegmnrstuw',
  arithmetic: '0123456789+-*/= :\n.acemnoprstuw',
  retrieval: 'abcdefghijklmnopqrstuvwxyz0123456789 .:?\n',
  lm: 'abcdefghijklmnopqrstuvwxyz .,\n',
  suite: 'abcdefghijklmnopqrstuvwxyz0123456789 .:?\n+-*/=();',
} as const;

/** A task family with its own tokenizer (the registry's task names). */
export type TaskFamily = keyof typeof TASK_ALPHABETS;

/**
 * The character tokenizer of a task family: `<pad>`, `<bos>`, `<eos>`, `<unk>`, then
 * {@link TASK_ALPHABETS}`[family]`. Every prompt and target of the family's tasks encodes
 * without `<unk>`.
 *
 * @throws LetheError `E_ARG` for an unknown family.
 */
export function taskTokenizer(family: TaskFamily): CharTokenizer {
  if (!Object.hasOwn(TASK_ALPHABETS, family)) {
    throw new LetheError(
      'E_ARG',
      `unknown task family; valid: ${Object.keys(TASK_ALPHABETS).join(', ')}`,
      'family',
    );
  }
  return new CharTokenizer(TASK_ALPHABETS[family]);
}
