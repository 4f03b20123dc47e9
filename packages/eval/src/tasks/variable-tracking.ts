import { formatAnswer } from './answer';
import { fillerWithItems } from './haystack';
import type { SeededRandom } from './seeded';
import { viaLine } from './two-hop';
import { distinctPseudoWords, distinctRandomDigits } from './words';

/** Syllables of a variable name (names are 4 letters). */
export const VARIABLE_NAME_SYLLABLES = 2;

/** What a variable-tracking instance is made of. */
export interface VariableTrackingSpec {
  /** Longest context (filler with assignments, before the question), in characters = tokens. */
  readonly contextChars: number;
  /** Chains of assignments, one of them queried; their values are distinct. */
  readonly chains: number;
  /** Variable-to-variable assignments per chain: a chain has `hops + 1` variables. */
  readonly hops: number;
  /** Digits of a chain's value. */
  readonly valueDigits: number;
  /** `filler`: the assignments scattered in filler sentences; `none`: the assignments alone. */
  readonly haystack: VariableHaystack;
  /**
   * Questions answered in the prompt before the asked one (0 for the task; a drill's stepping
   * stone otherwise, at most `chains`): each about a different chain, drawn at random from all of
   * them, the asked one's included, in the asked question's form and followed by its reference
   * answer line.
   */
  readonly recited: number;
  /**
   * `holders`: RULER's question, from a chain's value to its variables, each found by the
   * statement that names the one before it; `value`: from a chain's last variable to its value,
   * the route of variables written first, each found by its own statement (the direction a
   * needle is read in: key, then what it holds).
   */
  readonly query: VariableQuery;
}

/** Where a variable-tracking context puts its assignments (see {@link VariableTrackingSpec}). */
export type VariableHaystack = 'filler' | 'none';

/** Which end of a chain a variable-tracking question names (see {@link VariableTrackingSpec}). */
export type VariableQuery = 'holders' | 'value';

/** A generated variable-tracking instance. */
export interface VariableTrackingInstance {
  readonly prompt: string;
  readonly target: string;
  /** The queried chain's value (assigned to its first variable). */
  readonly value: string;
  /** The queried chain's variables in order of appearance, its first assigned the value. */
  readonly variables: readonly string[];
  /** Variables in the context (all chains). */
  readonly variableCount: number;
  /** Length of the context (the prompt before the question line). */
  readonly contextLength: number;
}

/** An assignment statement: `var <name> is <source>.` (a value or another variable). */
export function assignmentStatement(name: string, source: string): string {
  return `var ${name} is ${source}.`;
}

/** Shortest context that holds every assignment of `spec` (and the spaces between them). */
export function variableTrackingMinChars(
  spec: Pick<VariableTrackingSpec, 'chains' | 'hops' | 'valueDigits'>,
): number {
  const name = 'x'.repeat(2 * VARIABLE_NAME_SYLLABLES);
  const first = assignmentStatement(name, '0'.repeat(spec.valueDigits)).length + 1;
  const link = assignmentStatement(name, name).length + 1;
  return spec.chains * (first + spec.hops * link) - 1;
}

/** A chain of assignments: its value, its variables in order, its statements. */
interface Chain {
  readonly value: string;
  readonly vars: readonly string[];
  readonly statements: readonly string[];
}

/**
 * The route a `value` question's completion writes for a chain's variables (in order of
 * appearance): from the last variable's source back to the first variable, space-separated.
 */
export function variableRoute(variables: readonly string[]): string {
  return variables.slice(0, -1).reverse().join(' ');
}

/** The question about `chain` and its completion, under `query`. */
function questionAndTarget(chain: Chain, query: VariableQuery): [string, string] {
  if (query === 'holders') {
    return [`which variables hold ${chain.value}?`, formatAnswer(chain.vars.join(' '))];
  }
  return [
    `which value does ${chain.vars.at(-1)} hold?`,
    `${viaLine(variableRoute(chain.vars))}\n${formatAnswer(chain.value)}`,
  ];
}

/**
 * RULER's variable tracking: `chains` chains `var x0 is <value>.`, `var x1 is x0.`, …,
 * `var x<hops> is x<hops-1>.` with distinct 4-letter names and distinct values. The chains are
 * interleaved at random (each chain's statements keep their order, so every variable is
 * assigned after its source) and scattered in filler sentences.
 *
 * Prompt: the context, a newline, the question about one chain, a newline. With `query:
 * 'holders'` (RULER's) the question is `which variables hold <value>?` and the target
 * `answer: <x0> <x1> ….`, that chain's variables in order of appearance; with `query: 'value'`
 * it is `which value does <x<hops>> hold?` and the target `via <x<hops-1>> … <x0>` on a line of
 * its own (the route back to the value, one lookup a variable) and `answer: <value>.` Either way
 * the model writes the chain it follows; the verifier reads the answer line alone.
 *
 * As a drill (a curriculum's stepping stone, not a test of memory): with `haystack: 'none'` the
 * context is the assignments alone, and with `recited` above 0 that many questions on distinct
 * chains, each followed by its answer line, come before the asked one (so under
 * `lethe pretrain --loss-on all` every recited variable is a target: the first found from the
 * value, each next one from the variable before it, the lookups the task's answer chains). The
 * asked chain is drawn from all chains, recited or not, so it cannot be told by elimination.
 */
export function variableTrackingInstance(
  random: SeededRandom,
  spec: VariableTrackingSpec,
): VariableTrackingInstance {
  const width = spec.hops + 1;
  const names = distinctPseudoWords(random, spec.chains * width, VARIABLE_NAME_SYLLABLES);
  const values = distinctRandomDigits(random, spec.chains, spec.valueDigits);
  const chains = values.map((value, c): Chain => {
    const vars = names.slice(c * width, (c + 1) * width);
    const statements = vars.map((name, i) =>
      assignmentStatement(name, i === 0 ? value : vars[i - 1]!),
    );
    return { value, vars, statements };
  });
  const turns = random.shuffle(chains.flatMap((_, c) => Array.from({ length: width }, () => c)));
  const taken = chains.map(() => 0);
  const statements = turns.map((c) => chains[c]!.statements[taken[c]!++]!);
  const context =
    spec.haystack === 'none'
      ? statements.join(' ')
      : fillerWithItems(random, spec.contextChars, statements);
  const queried = chains[random.int(0, spec.chains - 1)]!;
  const recited = random
    .shuffle(chains)
    .slice(0, spec.recited)
    .map((chain) => `${questionAndTarget(chain, spec.query).join('\n')}\n`);
  const [asked, target] = questionAndTarget(queried, spec.query);
  return {
    prompt: `${context}\n${recited.join('')}${asked}\n`,
    target,
    value: queried.value,
    variables: queried.vars,
    variableCount: names.length,
    contextLength: context.length,
  };
}
