/** An element of a parsed document: tag name, attributes (entity-decoded), children, text. */
export interface Element {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: Element[];
  /** Concatenated text directly inside this element (entity-decoded). */
  text: string;
}

const VOID = new Set(['meta', 'br', 'link', 'img', 'input', 'hr']);
const ENTITIES: Readonly<Record<string, string>> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/**
 * Parses the markup our reports produce (HTML with inline SVG, every attribute double-quoted)
 * into an element tree, and throws when a closing tag does not match the open element, a tag
 * is left open, or a stray `<` or `>` appears in text. A small strict parser, not a browser.
 */
export function parseMarkup(source: string): Element {
  const root: Element = { name: '#root', attributes: {}, children: [], text: '' };
  const stack: Element[] = [root];
  const token =
    /<!doctype[^>]*>|<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>|([^<]+)/giy;
  let match: RegExpExecArray | null;
  let offset = 0;
  while (offset < source.length) {
    token.lastIndex = offset;
    match = token.exec(source);
    if (match === null)
      throw new Error(`unparsable markup at ${offset}: ${source.slice(offset, offset + 40)}`);
    offset = token.lastIndex;
    const [, closing, name, attributes, selfClosing, text] = match;
    const top = stack[stack.length - 1]!;
    if (text !== undefined) {
      if (text.includes('>')) throw new Error(`stray ">" in text: ${text.slice(0, 40)}`);
      top.text += decode(text);
    } else if (name !== undefined) {
      const lower = name.toLowerCase();
      if (closing === '/') {
        if (top.name !== lower) throw new Error(`</${lower}> closes <${top.name}>`);
        stack.pop();
      } else {
        const element: Element = {
          name: lower,
          attributes: Object.fromEntries(
            [...attributes!.matchAll(/([\w:-]+)="([^"]*)"/g)].map(([, key, value]) => [
              key!,
              decode(value!),
            ]),
          ),
          children: [],
          text: '',
        };
        top.children.push(element);
        if (selfClosing !== '/' && !VOID.has(lower)) stack.push(element);
      }
    }
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]!.name}>`);
  return root;
}

/** All descendants of `element` (depth first) that satisfy `test`. */
export function findAll(element: Element, test: (candidate: Element) => boolean): Element[] {
  return element.children.flatMap((child) => [
    ...(test(child) ? [child] : []),
    ...findAll(child, test),
  ]);
}

/** All text inside `element` and its descendants (own text first, then each child's). */
export function textContent(element: Element): string {
  return element.text + element.children.map(textContent).join('');
}

/** Whether `element` has `name` among its space-separated classes. */
export function hasClass(element: Element, name: string): boolean {
  return (element.attributes.class ?? '').split(/\s+/).includes(name);
}

function decode(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);
}
