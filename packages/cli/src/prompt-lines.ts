import { createInterface } from 'node:readline';

/**
 * Prompts read line by line from `input` until EOF. On a terminal (`interactive`) each line is
 * asked for with `lethe> ` on `output`; otherwise lines are read silently (piped input).
 * The caller handles each line before the next is asked for.
 */
export async function* promptLines(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  interactive: boolean,
): AsyncGenerator<string> {
  const reader = createInterface({
    input,
    output: interactive ? output : undefined,
    terminal: interactive,
  });
  reader.setPrompt('lethe> ');
  try {
    if (interactive) reader.prompt();
    for await (const line of reader) {
      yield line;
      if (interactive) reader.prompt();
    }
  } finally {
    reader.close();
  }
}
