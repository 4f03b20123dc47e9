import { LetheError } from './errors';

/**
 * The message of a `LetheError` without the `[CODE] argument: ` prefix its constructor adds, so
 * that it can be re-issued about another argument.
 */
export function bareMessage(error: LetheError): string {
  let message = error.message;
  const code = `[${error.code}] `;
  if (message.startsWith(code)) message = message.slice(code.length);
  const argument = error.argument === undefined ? undefined : `${error.argument}: `;
  if (argument !== undefined && message.startsWith(argument)) {
    message = message.slice(argument.length);
  }
  return message;
}

/** `error` re-issued with the same code and message about `argument` instead. */
export function withArgument(error: LetheError, argument: string): LetheError {
  return new LetheError(error.code, bareMessage(error), argument);
}
