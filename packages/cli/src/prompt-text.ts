/**
 * A prompt typed on a command line or at the interactive prompt, with the escapes `\n`
 * (newline), `\t` (tab) and `\\` (backslash) turned into the characters (task prompts end
 * with a newline: `--prompt 'compute: 3 +4 *2\n'`).
 */
export function unescapePrompt(text: string): string {
  return text.replace(/\\(n|t|\\)/g, (_, c: string) =>
    c === 'n' ? '\n' : c === 't' ? '\t' : '\\',
  );
}
