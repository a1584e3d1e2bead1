/**
 * Characters a person cannot see or that reorder what they see: C0 and C1 controls and DEL,
 * bidirectional embeddings, overrides, isolates and marks (U+061C, U+200E, U+200F, U+202A–U+202E,
 * U+2066–U+2069), zero-width and other invisible format characters (U+00AD, U+180E, U+200B–U+200D,
 * U+2060–U+2064, U+FEFF), line and paragraph separators (U+2028, U+2029), and lone surrogates.
 * Ordinary spaces are kept; newline and tab are escaped too, so one value reads as one line.
 */
const HIDDEN =
  // Matching control characters is the point of this expression.
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` as a person should read it: every hidden or reordering character (see above) replaced by a
 * visible escape `\u{XXXX}` (hex code point), everything else unchanged. A stored
 * `refund \u202E$ 00.1\u202C` reads `refund \u{202E}$ 00.1\u{202C}`, never "refund 1.00 $". The
 * result contains no character that changes how the characters around it are displayed, so it can
 * be shown in HTML, a terminal or an MCP client's question as is (HTML still needs its own escaping).
 * A backslash is not escaped: `\u{…}` in the original stays visible as typed. Pure.
 */
export function displaySafe(text: string): string {
  return text.replace(HIDDEN, (c) => `\\u{${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}}`);
}

/** Whether `text` holds a character {@link displaySafe} would escape. Pure. */
export function hasHiddenCharacters(text: string): boolean {
  HIDDEN.lastIndex = 0;
  const found = HIDDEN.test(text);
  HIDDEN.lastIndex = 0;
  return found;
}
