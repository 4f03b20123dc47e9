import { invalidRequest } from './api-error';
import type { ChatBody, CompletionBody } from './request-schemas';

/**
 * A field of the OpenAI API this server takes only at a value that asks for nothing it does not
 * do — its default, or an equivalent — and the values it takes.
 */
interface DefaultOnly {
  readonly field: string;
  /** Which values are accepted (null, "not given", always is). */
  readonly accepts: (value: unknown) => boolean;
  /** The accepted values, as the error names them. */
  readonly said: string;
}

const COMPLETION_DEFAULTS: readonly DefaultOnly[] = [
  { field: 'best_of', accepts: (value) => value === 1, said: '1' },
  { field: 'suffix', accepts: (value) => value === '', said: 'null or ""' },
];

const CHAT_DEFAULTS: readonly DefaultOnly[] = [
  {
    field: 'response_format',
    accepts: (value) => {
      const format = value as Record<string, unknown>;
      return format.type === 'text' && Object.keys(format).length === 1;
    },
    said: '{"type": "text"}',
  },
  { field: 'store', accepts: (value) => value === false, said: 'false' },
  { field: 'tools', accepts: (value) => (value as unknown[]).length === 0, said: '[]' },
  {
    field: 'tool_choice',
    accepts: (value) => value === 'none' || value === 'auto',
    said: '"none" or "auto" (there are no tools)',
  },
];

/**
 * Refuses (400 `unsupported_parameter` naming the field) a field this server takes only at its
 * default when the request gives another value: `best_of` other than 1, a `suffix`, a
 * `response_format` other than text, `store: true`, tools. `null` is always "not given".
 */
export function checkDefaultsOnly(
  body: CompletionBody | ChatBody,
  endpoint: 'completions' | 'chat',
): void {
  const record = body as unknown as Record<string, unknown>;
  for (const { field, accepts, said } of endpoint === 'chat'
    ? CHAT_DEFAULTS
    : COMPLETION_DEFAULTS) {
    const value = record[field];
    if (value === undefined || value === null || accepts(value)) continue;
    throw invalidRequest(
      field,
      `${field}: ${JSON.stringify(value)} is not supported by this server (it takes ${said})`,
      'unsupported_parameter',
    );
  }
}
