import { LetheError } from '@lethe/core';
import { CapacityError } from '@lethe/model';

/** The `type` of an OpenAI error body. */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'server_error';

/**
 * An HTTP error in the OpenAI shape: `{ "error": { message, type, param, code } }`, where
 * `param` names the request field at fault (a dotted path such as `lethe.budget` or
 * `messages.1.content`) when there is one.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: ApiErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Seconds a client should wait before retrying (sent as `Retry-After`), for a 429. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The response body. */
  body(): {
    error: { message: string; type: ApiErrorType; param: string | null; code: string | null };
  } {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }
}

/** A 400 naming the field at fault. */
export function invalidRequest(
  param: string | null,
  message: string,
  code = 'invalid_value',
): ApiError {
  return new ApiError(400, message, 'invalid_request_error', param, code);
}

/**
 * A Lethe error's message without the library's code and argument (`[E_ARG] budget.capacity: `):
 * what a client reads, in words about its request.
 */
export function plainMessage(error: LetheError): string {
  const prefix =
    error.argument === undefined ? `[${error.code}] ` : `[${error.code}] ${error.argument}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** Lethe error codes that describe a bad request rather than a fault of the server. */
const CLIENT_CODES = new Set(['E_ARG', 'E_SHAPE', 'E_DTYPE', 'E_BUDGET']);

/** How fastify reports errors it raised before a handler ran (its `code` property). */
interface FrameworkError {
  readonly code?: string;
  readonly statusCode?: number;
  readonly message: string;
  readonly validation?: readonly {
    instancePath: string;
    message?: string;
    params?: Record<string, unknown>;
  }[];
  readonly validationContext?: string;
}

/**
 * Maps anything a request can throw to the {@link ApiError} the client receives: an
 * `ApiError` as it is; a `LetheError` about an argument the handlers did not rename into a
 * request field → 400 with its message in words and no `param` (a full batch and queue,
 * `CapacityError`, → 429 with its retry-after);
 * the framework's own errors (bad JSON → 400 `invalid_json`, a body past the limit → 413, an
 * unsupported content type → 415, a schema violation → 400 naming the field); anything else →
 * 500 with a generic message (the details go to the log, not to the client).
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof LetheError) {
    if (error instanceof CapacityError) {
      return new ApiError(
        429,
        error.message,
        'rate_limit_error',
        null,
        'over_capacity',
        Math.max(1, Math.ceil(error.retryAfterSeconds)),
      );
    }
    // A Lethe error the handlers did not rename names a library argument, not a field of the
    // request: the client gets the words, not the internal name or code.
    if (CLIENT_CODES.has(error.code)) return invalidRequest(null, plainMessage(error));
    return new ApiError(500, 'the server failed while running the request', 'server_error');
  }
  const framework = error as FrameworkError;
  if (framework.validation !== undefined && framework.validation.length > 0) {
    return validationError(framework.validation[0]!, framework.validationContext ?? 'body');
  }
  switch (framework.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest(
        null,
        `the body is not valid JSON: ${framework.message}`,
        'invalid_json',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        413,
        'the request body is larger than the server accepts',
        'invalid_request_error',
        null,
        'body_too_large',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        415,
        'send the body as application/json',
        'invalid_request_error',
        null,
        'unsupported_media_type',
      );
    case 'FST_ERR_NOT_FOUND':
      return new ApiError(404, framework.message, 'not_found_error');
  }
  if (
    error instanceof SyntaxError ||
    (framework.statusCode === 400 && framework.code === undefined)
  ) {
    return invalidRequest(null, `the body is not valid JSON: ${framework.message}`, 'invalid_json');
  }
  if (
    typeof framework.statusCode === 'number' &&
    framework.statusCode >= 400 &&
    framework.statusCode < 500
  ) {
    return new ApiError(framework.statusCode, framework.message, 'invalid_request_error');
  }
  return new ApiError(500, 'the server failed while running the request', 'server_error');
}

/** A schema violation as a 400 naming the field (`messages.0.role`), or the missing one. */
function validationError(
  issue: { instancePath: string; message?: string; params?: Record<string, unknown> },
  context: string,
): ApiError {
  const path = issue.instancePath.split('/').filter((part) => part !== '');
  const missing = issue.params?.missingProperty;
  const extra = issue.params?.additionalProperty;
  if (typeof missing === 'string') {
    const param = [...path, missing].join('.');
    return invalidRequest(param, `${param}: is required`, 'missing_required_parameter');
  }
  if (typeof extra === 'string') {
    const param = [...path, extra].join('.');
    return invalidRequest(
      param,
      `${param}: is not a parameter this server supports`,
      'unsupported_parameter',
    );
  }
  const param = path.length > 0 ? path.join('.') : context;
  return invalidRequest(param, `${param}: ${issue.message ?? 'is invalid'}`, 'invalid_type');
}
