/**
 * `text` as one POSIX shell word: bare when it is plainly safe, else single-quoted (an inner
 * `'` becomes `'\''`). The same rule as the commands of `reproduceCommand`.
 */
export function shellQuote(text: string): string {
  if (/^[A-Za-z0-9_./:,=+@%-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
