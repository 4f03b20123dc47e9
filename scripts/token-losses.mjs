#!/usr/bin/env node
// Where a task model stands on the associative-recall plateau: its mean next-token loss on a
// suite member's examples, split by line of the prompt (0: the context, 1: a recitation line or
// the question, …) and by kind of token (digits, the first digit of a value, the others), and how
// its attention heads spread (mean distance to the keys they read, the mass on the token itself,
// on the previous token and beyond three back). Digits at ln 10 ≈ 2.30 nats are guessed, not
// copied; a previous-token head (mass on the previous token near 1) is half of an induction head.
// On `countdown-verbose` it also splits the completion: the results' digits by operator, the
// operands', the layout and the answer line (arithmetic guessed, or the search's form); on the
// retrieval members, by word of the answer (its first value or name, the second, …) and
// two-hop's `via` line.
//
// Reads a model directory (`lethe pretrain --out`) or a run's state directory (`<out>.state`,
// the weights of its last checkpoint, with the sizes of its settings file). After `npm run build`:
//
//   node scripts/token-losses.mjs <model or state dir> <suite member> [examples (16)] [contextChars (256)]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTask, encodeText } from '../packages/eval/dist/index.js';
import { DecoderModel } from '../packages/model/dist/index.js';
import { readSafetensorsFile } from '../packages/model/dist/node.js';
import { taskModelConfig } from '../packages/task-models/dist/index.js';
import { initBackend, tf } from '../packages/tensor/dist/index.js';

const [dir, member, examples = '16', contextChars = '256'] = process.argv.slice(2);
if (dir === undefined || member === undefined) {
  console.error(
    'usage: node scripts/token-losses.mjs <model or state dir> <suite member> [examples] [contextChars]',
  );
  process.exit(2);
}
await initBackend('wasm');
const modelDir = existsSync(join(dir, 'model.safetensors'));
const file = await readSafetensorsFile(
  join(dir, modelDir ? 'model.safetensors' : 'sft-checkpoint.safetensors'),
);
const tensors = {};
for (const [name, tensor] of Object.entries(file.tensors)) {
  if (modelDir) tensors[name] = tensor;
  else if (name.startsWith('param/')) tensors[name.slice('param/'.length)] = tensor;
}
const sizes = modelDir
  ? JSON.parse(readFileSync(join(dir, 'lethe-model.json'), 'utf8')).model
  : JSON.parse(readFileSync(join(dir, 'lethe-pretrain-settings.json'), 'utf8')).modelSize;
const task = createTask('suite', { member, contextChars: Number(contextChars) });
const model = DecoderModel.fromTensors(taskModelConfig(sizes, task.tokenizer.vocabSize), tensors);

const losses = new Map();
const add = (group, loss) => {
  if (!losses.has(group)) losses.set(group, []);
  losses.get(group).push(loss);
};
const heads = new Map();
for (let index = 0; index < Number(examples); index++) {
  const example = task.example(1, index);
  // As training and the harness see it: BOS first (when the tokenizer has one), then the
  // prompt and the reference completion.
  const prompt = Array.from(encodeText(task.tokenizer, example.prompt));
  const ids = [...prompt, ...task.tokenizer.encode(example.target)];
  const pieces = ids.map((id) => task.tokenizer.decode([id]));
  const promptLength = prompt.length;
  const { logProbs, attention } = tf.tidy(() => {
    const out = model.forward(tf.tensor2d([ids], [1, ids.length], 'int32'), {
      capture: { attention: true },
    });
    return {
      logProbs: tf.logSoftmax(tf.squeeze(out.logits, [0])).arraySync(),
      attention: out.attention.map((a) => a.arraySync()[0]),
    };
  });
  let line = 0;
  const trace = { operator: '', result: false, answer: false };
  for (let t = 1; t < ids.length; t++) {
    if (pieces[t - 1].includes('\n')) line++;
    const loss = -logProbs[t - 1][ids[t]];
    const digit = /^[0-9]$/.test(pieces[t]);
    const where = t >= promptLength ? 'answer' : `line ${line}`;
    add(`${where}, ${digit ? 'digits' : 'other tokens'}`, loss);
    if (digit) {
      const first = !/^[0-9]$/.test(pieces[t - 1]);
      add(`${where}, ${first ? 'first digits' : 'later digits'}`, loss);
    }
    if (member === 'countdown-verbose' && t >= promptLength) {
      add(`trace, ${traceKind(trace, pieces[t - 1], pieces[t])}`, loss);
    } else if (t >= promptLength) {
      add(`answer, ${answerKind(pieces.slice(promptLength, t).join(''), pieces[t])}`, loss);
    }
  }
  for (const [layer, probabilities] of attention.entries()) {
    for (const [head, rows] of probabilities.entries()) {
      const key = `layer ${layer} head ${head}`;
      const sums = heads.get(key) ?? { distance: 0, self: 0, previous: 0, beyond: 0, rows: 0 };
      for (let q = 1; q < rows.length; q++) {
        for (let k = 0; k <= q; k++) {
          sums.distance += rows[q][k] * (q - k);
          if (q - k > 3) sums.beyond += rows[q][k];
        }
        sums.self += rows[q][q];
        sums.previous += rows[q][q - 1];
        sums.rows++;
      }
      heads.set(key, sums);
    }
  }
}
/**
 * What a token of a verbose-Countdown completion is, given the one before it: a digit of a result
 * (after `=`, by the operator of its line), a digit of an operand, an operator, the layout (spaces,
 * `;`, new lines), or part of the answer line. `state` carries the line's operator and whether
 * its `=` has passed.
 */
function traceKind(state, previous, piece) {
  if (previous.includes('answer')) state.answer = true;
  if (state.answer) return 'answer line';
  if (/[;\n]/.test(previous)) state.result = false;
  const operator = previous.match(/[-+*/]/);
  if (operator !== null && !state.result) state.operator = operator[0];
  if (previous.includes('=')) state.result = true;
  if (/^[0-9]$/.test(piece)) {
    return state.result ? `result digits of ${state.operator}` : 'operand digits';
  }
  return /[-+*/]/.test(piece) ? 'operators' : 'layout';
}

/**
 * Where a token of a retrieval completion stands: on the `via` line (two-hop's route), in the
 * answer's first, second, … word (a value, a variable or a word; the word a token starts or
 * continues), or the layout (`answer:`, the stop).
 */
function answerKind(before, piece) {
  const line = before.slice(before.lastIndexOf('\n') + 1) + piece;
  if (line.startsWith('via')) return 'via line';
  if (!line.startsWith('answer:') || /^[\s.:]*$/.test(piece)) return 'layout';
  return `word ${line.slice('answer:'.length).trim().split(/\s+/).length}`;
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
console.log('mean loss (nats) by line and kind of token, with the count:');
for (const [group, values] of [...losses].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`  ${group.padEnd(28)} ${mean(values).toFixed(3)}  (${values.length})`);
}
console.log('attention: mean distance, mass on itself, on the previous token, beyond 3 back:');
for (const [key, s] of heads) {
  const f = (x) => (x / s.rows).toFixed(2);
  console.log(`  ${key}: ${f(s.distance)}, ${f(s.self)}, ${f(s.previous)}, ${f(s.beyond)}`);
}
