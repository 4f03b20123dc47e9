#!/usr/bin/env node
// Where a model's verbose Countdown goes wrong: it writes the greedy completion of validation
// examples (task seed 1 by default, kept out of training), finds the first line that leaves the
// reference search and sorts the failures by what that line did:
//
//   answered early      `answer:` where the search goes on (a near miss taken for the target)
//   went past target    the reference has reached the target; the model writes another line
//   answer composed     both reach the answer line; the model's expression is wrong
//   wrong result        the reference's operation with another result
//   wrong operation     another operation than the reference's next one
//   wrong state         the reference's operation and result, another state after it
//   stopped             the completion ends before the reference does
//
// An example the verifier accepts counts as solved even where its search differs. `goal` is the
// form of the reference (the suite's `countdownGoal`; default `checked`), for models trained on
// an earlier form. After `npm run build`, from the root:
//
//   node scripts/countdown-divergence.mjs <model dir> [examples (64)] [seed (1)] [goal (checked)]
import { createTask } from '../packages/eval/dist/index.js';
import { greedyCompletions } from './greedy-completions.mjs';

const [dir, examples = '64', seed = '1', goal = 'checked'] = process.argv.slice(2);
if (dir === undefined) {
  console.error(
    'usage: node scripts/countdown-divergence.mjs <model dir> [examples] [seed] [goal]',
  );
  process.exit(2);
}
const task = createTask('suite', { member: 'countdown-verbose', countdownGoal: goal });
const cases = Array.from({ length: Number(examples) }, (_, i) => task.example(Number(seed), i));
const outputs = greedyCompletions(dir, cases, task.maxNewTokens);

const OPERATION = /^ *(\d+)([-+*/])(\d+)=(\d+)/;
const counts = new Map();
outputs.forEach((output, i) => {
  const example = cases[i];
  const got = output.split('\n');
  const want = example.target.split('\n');
  let line = 0;
  while (line < want.length && got[line] === want[line]) line++;
  const solved = task.verify(example, output).correct;
  const kind = solved ? 'solved' : failure(got[line], want[line], example.data.target);
  counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const shown = (text) => JSON.stringify(text ?? '<end>');
  console.log(
    `${String(i).padStart(3)} ${kind.padEnd(17)} line ${line} of ${want.length}: ` +
      `reference ${shown(want[line])}, model ${shown(got[line])}`,
  );
});
console.log(
  [...counts].map(([kind, n]) => `${kind} ${n}`).join(', '),
  `(of ${outputs.length}, task seed ${seed})`,
);

/** What the first line leaving the reference did (see the header). */
function failure(got, want, target) {
  if (got === undefined || got === '') return 'stopped';
  const answers = (text) => text.startsWith('answer:');
  if (answers(want)) return answers(got) ? 'answer composed' : 'went past target';
  if (answers(got)) return 'answered early';
  const g = OPERATION.exec(got);
  const w = OPERATION.exec(want);
  if (g === null || w === null) return 'wrong operation';
  if (g[1] !== w[1] || g[2] !== w[2] || g[3] !== w[3]) return 'wrong operation';
  if (g[4] !== w[4]) return 'wrong result';
  return Number(w[4]) === target ? 'went past target' : 'wrong state';
}
