/** The target a trace must write, and where (the solver's `goal`, `prompt` aside). */
export interface TraceGoal {
  readonly target: number;
  /** `restated`: before every state; `checked`: also at the end of every other line. */
  readonly form: 'restated' | 'checked';
}

/**
 * An independent reader of the Countdown solver's trace format, for tests: replays every line
 * against the state it claims to work on and returns the value of each line, or throws with the
 * first inconsistency. With a `goal`, every state must be written after its target and a colon,
 * and in the `checked` form every other line must end with `;` and the target; without one, no
 * line may name a target.
 */
export function replayCountdownTrace(
  numbers: readonly number[],
  lines: readonly string[],
  goal?: TraceGoal,
): number[] {
  const states: number[][] = [numbers.slice()];
  let maxDepth = 0;
  const values: number[] = [];
  lines.forEach((line, i) => {
    const match = /^( *)(\d+)([+\-*/])(\d+)=(\d+)(?:;(?:(\d+):)?([\d ]+))?$/.exec(
      goal?.form === 'checked' ? checkedToStated(line, goal.target, i) : line,
    );
    if (!match) throw new Error(`line ${i} is not a trace line: ${JSON.stringify(line)}`);
    const depth = match[1]!.length;
    if (depth > maxDepth) throw new Error(`line ${i} jumps to depth ${depth} (max ${maxDepth})`);
    const a = Number(match[2]);
    const op = match[3]!;
    const b = Number(match[4]);
    const value = Number(match[5]);
    const state = states[depth]!.slice();
    for (const n of [a, b]) {
      const at = state.indexOf(n);
      if (at === -1) throw new Error(`line ${i} uses ${n}, not in ${states[depth]!.join(' ')}`);
      state.splice(at, 1);
    }
    if (a < b) throw new Error(`line ${i} has its smaller operand first`);
    const expected =
      op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : b === 0 ? Number.NaN : a / b;
    if (expected !== value || !Number.isInteger(value) || value <= 0) {
      throw new Error(`line ${i} is wrong or breaks the rules: ${line}`);
    }
    const next = [...state, value];
    if (match[7] !== undefined) {
      const written = match[6] === undefined ? undefined : Number(match[6]);
      if (written !== goal?.target) {
        throw new Error(`line ${i} restates target ${written}, expected ${goal?.target}`);
      }
      const listed = match[7].split(' ').map(Number);
      if (listed.join(' ') !== next.join(' ')) {
        throw new Error(`line ${i} lists state ${match[7]}, expected ${next.join(' ')}`);
      }
      states[depth + 1] = next;
      maxDepth = depth + 1;
    } else {
      if (next.length > 1 && i !== lines.length - 1) {
        throw new Error(`line ${i} leaves ${next.length} numbers but lists no state`);
      }
      maxDepth = depth;
    }
    values.push(value);
  });
  return values;
}

/** A `checked` line as the `restated` form writes it: its trailing `;<target>` dropped. */
function checkedToStated(line: string, target: number, i: number): string {
  if (line.includes(`;${target}:`)) return line;
  if (!line.endsWith(`;${target}`)) throw new Error(`line ${i} does not check target ${target}`);
  return line.slice(0, -`;${target}`.length);
}
