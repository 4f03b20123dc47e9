import { LetheError } from '@lethe/core';
import { assertJson, type JsonValue } from '@lethe/eval';

/**
 * Reads one `--task-option key=value` flag. The value is JSON when it parses as JSON (`3`,
 * `0.5`, `true`, `"3"`), else the text itself (`niah-multi`, `mixed`).
 *
 * @throws LetheError `E_ARG` naming `--task-option` without a `key=` part.
 */
export function parseTaskOptionFlag(text: string): [string, JsonValue] {
  const eq = text.indexOf('=');
  if (eq <= 0) {
    throw new LetheError(
      'E_ARG',
      `must be key=value (e.g. count=3), got ${JSON.stringify(text)}`,
      '--task-option',
    );
  }
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  let value: JsonValue;
  try {
    value = assertJson(JSON.parse(raw), `--task-option ${key}`);
  } catch {
    value = raw;
  }
  return [key, value];
}

/**
 * The `key=value` text of a task option that {@link parseTaskOptionFlag} reads back as
 * `value`: a string bare when it would not parse as other JSON, everything else as JSON.
 */
export function formatTaskOptionFlag(key: string, value: JsonValue): string {
  if (typeof value === 'string') {
    let reread: unknown = value;
    try {
      reread = JSON.parse(value);
    } catch {
      // Not JSON: read back as the text itself.
    }
    if (reread === value) return `${key}=${value}`;
  }
  return `${key}=${JSON.stringify(value)}`;
}

/**
 * Reads a `--task-options <json>` flag: a JSON object of task options (e.g.
 * `{"member":"niah-multi","contextChars":1024}`), the options `taskVariant` puts over a task's.
 *
 * @param argument - the flag named in the refusal (`--extra-task` where the options follow a
 *   label).
 * @throws LetheError `E_ARG` naming `argument` when the text is not a JSON object.
 */
export function parseTaskOptionsFlag(
  text: string,
  argument = '--task-options',
): Record<string, JsonValue> {
  let options: unknown;
  try {
    options = JSON.parse(text);
  } catch {
    options = undefined;
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LetheError(
      'E_ARG',
      `must be a JSON object of task options, got ${JSON.stringify(text)}`,
      argument,
    );
  }
  return assertJson(options, argument) as Record<string, JsonValue>;
}
