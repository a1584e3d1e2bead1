import { distance } from 'fastest-levenshtein';

/** Names longer than this are not worth fuzzy-matching (registered names are at most 64 chars). */
const MAX_COMPARED_LENGTH = 128;

/** Lower-case and drop separators, so `IssueRefund`, `issue-refund` and `issue_refund` agree. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function score(query: string, normQuery: string, candidate: string): number | undefined {
  const normCandidate = normalize(candidate);
  if (normCandidate === normQuery) return 0;
  // A shared stem (`refund` inside `issue_refund`) is a stronger hint than a small edit distance,
  // but only once it is long enough not to match everything.
  if (normQuery.length >= 4 && normCandidate.length >= 4) {
    if (normCandidate.includes(normQuery) || normQuery.includes(normCandidate)) {
      return 1 + Math.abs(normCandidate.length - normQuery.length) / 1000;
    }
  }
  const d = Math.min(
    distance(query.toLowerCase(), candidate.toLowerCase()),
    distance(normQuery, normCandidate),
  );
  const allowed = Math.max(1, Math.floor(Math.max(query.length, 1) / 3));
  return d <= allowed ? 2 + d : undefined;
}

/**
 * The registered names closest to a name that does not exist, best first, at most `max`.
 *
 * Ranking: same name modulo case and separators; then one name containing the other (stems of at
 * least 4 characters); then Levenshtein distance within a third of the query's length (at least 1).
 * Ties break alphabetically so the message is deterministic. Pass only names the caller may see:
 * a suggestion must never reveal another tenant's tool.
 */
export function suggestNames(query: string, candidates: Iterable<string>, max = 3): string[] {
  if (query.length === 0 || query.length > MAX_COMPARED_LENGTH) return [];
  const normQuery = normalize(query);
  const scored: { name: string; s: number }[] = [];
  for (const name of new Set(candidates)) {
    if (name === query) continue;
    const s = score(query, normQuery, name);
    if (s !== undefined) scored.push({ name, s });
  }
  scored.sort((a, b) => a.s - b.s || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, max).map((x) => x.name);
}

/**
 * The "did you mean" sentence for a message: `Did you mean 'a'?`, `Did you mean 'a' or 'b'?`,
 * `Did you mean 'a', 'b' or 'c'?`; an empty string when there is nothing to suggest.
 */
export function didYouMean(suggestions: readonly string[]): string {
  const quoted = suggestions.map((s) => `'${s}'`);
  if (quoted.length === 0) return '';
  if (quoted.length === 1) return `Did you mean ${quoted[0]}?`;
  return `Did you mean ${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}?`;
}
