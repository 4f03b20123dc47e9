/**
 * Countdown expressions: parsing and exact evaluation under the standard Countdown rules.
 *
 * Grammar (spaces anywhere between tokens):
 * ```
 * answer := expr [ '=' integer ]
 * expr   := term   { ('+' | '-') term }
 * term   := factor { ('*' | '/') factor }
 * factor := integer | '(' expr ')'
 * ```
 * Operators are left-associative with the usual precedence; there is no unary minus and an
 * integer has no leading zero. Rules: every number comes from the given multiset and is used
 * at most as often as it is given; every intermediate value is a positive integer (a
 * subtraction must leave more than 0, a division must be exact). A trailing `= n` claim, when
 * written, must equal the expression's value.
 */

/** Longest expression (in characters) the checker accepts; longer is malformed. */
export const MAX_EXPRESSION_CHARS = 256;

/** Deepest parenthesis nesting the checker accepts; deeper is malformed. */
export const MAX_EXPRESSION_DEPTH = 32;

/** A parsed Countdown expression. */
type CountdownNode =
  | { readonly kind: 'number'; readonly value: number }
  | {
      readonly kind: 'op';
      readonly op: CountdownOp;
      readonly left: CountdownNode;
      readonly right: CountdownNode;
    };

/** The four Countdown operations. */
export type CountdownOp = '+' | '-' | '*' | '/';

/** The outcome of {@link checkCountdownExpression}. */
export type CountdownCheck =
  | {
      readonly ok: true;
      /** Value of the expression. */
      readonly value: number;
      /** The numbers it uses, in order of appearance. */
      readonly numbers: readonly number[];
    }
  | { readonly ok: false; readonly reason: string };

type Token = { kind: 'number'; value: number } | { kind: 'symbol'; value: string };

class ParseError extends Error {}

/**
 * Parses `text` (an expression with an optional `= n` claim) and evaluates it exactly under
 * the Countdown rules against the multiset `available`. Never throws: anything wrong comes back
 * as `{ok: false, reason}`, with the reason starting `malformed:` for text that is not an
 * expression.
 */
export function checkCountdownExpression(
  text: string,
  available: readonly number[],
): CountdownCheck {
  if (text.length > MAX_EXPRESSION_CHARS) {
    return {
      ok: false,
      reason: `malformed: answer longer than ${MAX_EXPRESSION_CHARS} characters`,
    };
  }
  let tree: CountdownNode;
  let claim: number | undefined;
  try {
    const parts = text.split('=');
    if (parts.length > 2) throw new ParseError('more than one "="');
    if (parts.length === 2) claim = parseClaim(parts[1]!);
    tree = parse(parts[0]!);
  } catch (error) {
    if (error instanceof ParseError) return { ok: false, reason: `malformed: ${error.message}` };
    throw error;
  }
  const numbers = leaves(tree);
  const remaining = new Map<number, number>();
  for (const n of available) remaining.set(n, (remaining.get(n) ?? 0) + 1);
  for (const n of numbers) {
    const left = remaining.get(n) ?? 0;
    if (left === 0) {
      return {
        ok: false,
        reason: available.includes(n)
          ? `number ${n} used more often than given`
          : `number ${n} is not one of the given numbers`,
      };
    }
    remaining.set(n, left - 1);
  }
  const result = evaluate(tree);
  if (typeof result === 'string') return { ok: false, reason: result };
  if (claim !== undefined && claim !== result) {
    return {
      ok: false,
      reason: `wrong arithmetic: claims ${claim} but the expression is ${result}`,
    };
  }
  return { ok: true, value: result, numbers };
}

/** Parses an expression (no `=` claim) into a tree; throws {@link ParseError} if it is none. */
function parse(text: string): CountdownNode {
  const tokens = tokenize(text);
  let position = 0;
  let depth = 0;
  const peek = (): Token | undefined => tokens[position];
  const isSymbol = (token: Token | undefined, symbols: string): boolean =>
    token !== undefined && token.kind === 'symbol' && symbols.includes(token.value);

  const factor = (): CountdownNode => {
    const token = peek();
    if (token === undefined) throw new ParseError('expression ends early');
    if (token.kind === 'number') {
      position++;
      return { kind: 'number', value: token.value };
    }
    if (token.value === '(') {
      depth++;
      if (depth > MAX_EXPRESSION_DEPTH) {
        throw new ParseError(`parentheses nested deeper than ${MAX_EXPRESSION_DEPTH}`);
      }
      position++;
      const inner = expr();
      if (!isSymbol(peek(), ')')) throw new ParseError('missing ")"');
      position++;
      depth--;
      return inner;
    }
    throw new ParseError(`unexpected "${token.value}"`);
  };
  const term = (): CountdownNode => {
    let node = factor();
    while (isSymbol(peek(), '*/')) {
      const op = (peek() as Token).value as CountdownOp;
      position++;
      node = { kind: 'op', op, left: node, right: factor() };
    }
    return node;
  };
  const expr = (): CountdownNode => {
    let node = term();
    while (isSymbol(peek(), '+-')) {
      const op = (peek() as Token).value as CountdownOp;
      position++;
      node = { kind: 'op', op, left: node, right: term() };
    }
    return node;
  };

  const tree = expr();
  const rest = peek();
  if (rest !== undefined) {
    throw new ParseError(`unexpected "${String(rest.value)}"`);
  }
  return tree;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === ' ') {
      i++;
    } else if (char >= '0' && char <= '9') {
      let j = i;
      while (j < text.length && text[j]! >= '0' && text[j]! <= '9') j++;
      const digits = text.slice(i, j);
      if (digits.length > 1 && digits[0] === '0') {
        throw new ParseError(`number "${digits}" has a leading zero`);
      }
      if (digits.length > 15) throw new ParseError(`number "${digits}" is too long`);
      tokens.push({ kind: 'number', value: Number(digits) });
      i = j;
    } else if ('+-*/()'.includes(char)) {
      tokens.push({ kind: 'symbol', value: char });
      i++;
    } else {
      throw new ParseError(`unexpected character ${JSON.stringify(char)}`);
    }
  }
  if (tokens.length === 0) throw new ParseError('empty expression');
  return tokens;
}

function parseClaim(text: string): number {
  const trimmed = text.trim();
  if (!/^(0|[1-9][0-9]{0,14})$/.test(trimmed)) {
    throw new ParseError(`the value after "=" is not a number: ${JSON.stringify(trimmed)}`);
  }
  return Number(trimmed);
}

function leaves(node: CountdownNode): number[] {
  if (node.kind === 'number') return [node.value];
  return [...leaves(node.left), ...leaves(node.right)];
}

/** The value of `node`, or the reason a step breaks the rules. */
function evaluate(node: CountdownNode): number | string {
  if (node.kind === 'number') return node.value;
  const a = evaluate(node.left);
  if (typeof a === 'string') return a;
  const b = evaluate(node.right);
  if (typeof b === 'string') return b;
  let value: number;
  switch (node.op) {
    case '+':
      value = a + b;
      break;
    case '-':
      value = a - b;
      if (value <= 0) return `non-positive intermediate: ${a}-${b}=${value}`;
      break;
    case '*':
      value = a * b;
      break;
    case '/':
      if (b === 0) return `division by zero: ${a}/0`;
      if (a % b !== 0) return `division with remainder: ${a}/${b}`;
      value = a / b;
      break;
  }
  if (!Number.isSafeInteger(value)) return `intermediate value too large: ${a}${node.op}${b}`;
  return value;
}
