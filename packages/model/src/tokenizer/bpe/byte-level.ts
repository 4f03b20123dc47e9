/**
 * GPT-2's byte-to-character table, which byte-level BPE (GPT-2, Llama 3, Qwen2) uses to write
 * every byte as a printable character: printable Latin-1 bytes stand for themselves, the other
 * 68 take the code points from U+0100 on, in byte order. A space is `Ġ`, a newline `Ċ`.
 */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table: string[] = [];
  let next = 0x100;
  for (let b = 0; b < 256; b++) table.push(String.fromCodePoint(printable(b) ? b : next++));
  return table;
})();

const ENCODER = new TextEncoder();

/** The byte-level characters of `text`'s UTF-8 bytes, one per byte. */
export function byteLevelChars(text: string): string[] {
  return Array.from(ENCODER.encode(text), (byte) => BYTE_TO_CHAR[byte]!);
}
