import { LetheError } from '@lethe/core';
import { CharTokenizer, type HfTokenizer } from '@lethe/model';
import { suiteBpeTokenizer } from './suite-tokenizer';

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
 *
 * The long-context suite reads its text with a byte-level BPE instead (`suiteBpeTokenizer`).
 */
export const TASK_ALPHABETS = {
  countdown: '0123456789+-*/=() ;:\n.abegmnrstuw',
  arithmetic: '0123456789+-*/= :\n.acemnoprstuw',
  retrieval: 'abcdefghijklmnopqrstuvwxyz0123456789 .:?\n',
  lm: 'abcdefghijklmnopqrstuvwxyz .,\n',
} as const;

/** A task family with its own tokenizer (the registry's task names). */
export type TaskFamily = keyof typeof TASK_ALPHABETS | 'suite';

/** Every task family. */
const FAMILIES: readonly TaskFamily[] = [...(Object.keys(TASK_ALPHABETS) as TaskFamily[]), 'suite'];

/**
 * The tokenizer of a task family: for the long-context suite its byte-level BPE
 * (`suiteBpeTokenizer`), for the others the character tokenizer `<pad>`, `<bos>`, `<eos>`,
 * `<unk>`, then {@link TASK_ALPHABETS}`[family]`. Every prompt and target of the family's tasks
 * encodes without `<unk>`.
 *
 * @throws LetheError `E_ARG` for an unknown family.
 */
export function taskTokenizer(family: 'suite'): HfTokenizer;
export function taskTokenizer(family: keyof typeof TASK_ALPHABETS): CharTokenizer;
export function taskTokenizer(family: TaskFamily): CharTokenizer | HfTokenizer;
export function taskTokenizer(family: TaskFamily): CharTokenizer | HfTokenizer {
  if (!FAMILIES.includes(family)) {
    throw new LetheError('E_ARG', `unknown task family; valid: ${FAMILIES.join(', ')}`, 'family');
  }
  if (family === 'suite') return suiteBpeTokenizer();
  return new CharTokenizer(TASK_ALPHABETS[family]);
}
