/** One secret found somewhere it must not be. */
export interface SecretFinding {
  readonly where: string;
  readonly secret: string;
}

/**
 * Appends to `out` every secret of `secrets` (name → value) that occurs in `text` verbatim or
 * base64-encoded (standard or URL-safe, at any byte alignment: a copy of raw bytes travels as
 * base64 in JSON and Avro strings), naming `where` it was found. Values shorter than 16 characters
 * are not searched for: they would match by chance, so tests must use long, distinctive values.
 */
export function scanForSecrets(
  where: string,
  text: string,
  secrets: Readonly<Record<string, string>>,
  out: SecretFinding[],
): void {
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length < 16) continue;
    if ([value, ...base64Forms(value)].some((form) => text.includes(form))) {
      out.push({ where, secret: name });
    }
  }
}

/**
 * The base64 text that any encoding of `value`'s bytes contains, whatever bytes come before it:
 * for each of the three alignments, the characters that depend on `value`'s bytes alone.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms: string[] = [];
  for (let lead = 0; lead < 3; lead += 1) {
    const encoded = Buffer.concat([Buffer.alloc(lead), bytes]).toString('base64');
    // Characters of the first group mix in the lead bytes; those of the last one the padding.
    const inner = encoded.slice(lead === 0 ? 0 : 4, encoded.length - 4);
    forms.push(inner, inner.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}
