#!/usr/bin/env node
// Which link a model follows on the suite's `two-hop`: it writes the greedy completions of
// validation examples (task seed 1 by default, kept out of training) and sorts the key each
// names on its `via` line by where that key stands in the context:
//
//   asked link       the `b` of the link whose `a` the question asks (the right route)
//   other link       the `b` of the other chain's link (the distractor's route)
//   other            any other text (a key of no link, a key's first syllable with another's second)
//
// each split by whether the asked link comes first or second in the context. A model that
// matches the asked key names the asked link's `b` wherever it stands; one that reads the links
// by place names the same place's whatever is asked. After `npm run build`, from the root:
//
//   node scripts/two-hop-routes.mjs <model dir> [examples (64)] [contextChars (4096)] [seed (1)]
import { createTask } from '../packages/eval/dist/index.js';
import { greedyCompletions } from './greedy-completions.mjs';

const [dir, examples = '64', contextChars = '4096', seed = '1'] = process.argv.slice(2);
if (dir === undefined) {
  console.error(
    'usage: node scripts/two-hop-routes.mjs <model dir> [examples] [contextChars] [seed]',
  );
  process.exit(2);
}
const task = createTask('suite', { member: 'two-hop', contextChars: Number(contextChars) });
const cases = Array.from({ length: Number(examples) }, (_, i) => task.example(Number(seed), i));
const outputs = greedyCompletions(dir, cases, task.maxNewTokens);

const LINK = /the number for ([a-z]+) is the number for ([a-z]+)\./g;
const counts = new Map();
let solved = 0;
outputs.forEach((output, i) => {
  const example = cases[i];
  const asked = example.data.queries[0];
  const links = [...example.prompt.matchAll(LINK)].map((m) => ({ a: m[1], b: m[2] }));
  const place = links.findIndex((link) => link.a === asked);
  const named = /^via ([a-z]+)$/.exec(output.split('\n')[0] ?? '')?.[1];
  const followed =
    named === links[place].b
      ? 'asked link'
      : links.some((link, j) => j !== place && link.b === named)
        ? 'other link'
        : 'other';
  const row = `${followed}, asked link ${place === 0 ? 'first' : 'second'}`;
  counts.set(row, (counts.get(row) ?? 0) + 1);
  if (task.verify(example, output).correct) solved++;
});
for (const [row, n] of [...counts].sort()) console.log(`${row.padEnd(32)} ${n}`);
console.log(
  `solved ${solved} of ${outputs.length} (task seed ${seed}, ${contextChars} characters)`,
);
