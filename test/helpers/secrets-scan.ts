/** One secret found somewhere it must not be. */
export interface SecretFinding {
  readonly where: string;
  readonly secret: string;
}

/**
 * Appends to `out` every secret of `secrets` (name → value) that occurs verbatim in `text`, naming
 * `where` it was found. Values shorter than 16 characters are not searched for: they would match by
 * chance, so tests must use long, distinctive secret values.
 */
export function scanForSecrets(
  where: string,
  text: string,
  secrets: Readonly<Record<string, string>>,
  out: SecretFinding[],
): void {
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length >= 16 && text.includes(value)) out.push({ where, secret: name });
  }
}
