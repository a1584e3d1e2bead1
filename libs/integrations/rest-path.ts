import { ToolgateError } from '../core/errors.js';

/**
 * Builds a request path from a template whose interpolated values are percent-encoded one path
 * segment each: ``restPath`/documents/${id}/versions` `` with id `a/b` is `/documents/a%2Fb/versions`.
 * A value cannot add segments, a query or a fragment, and values that would move the path on the
 * downstream (`''`, `.`, `..`, and their encoded forms) are refused with CALLER_ERROR — an argument
 * the model supplied must never re-target a request (`GET /documents/..` is `GET /`).
 */
export function restPath(strings: TemplateStringsArray, ...values: readonly (string | number)[]): string {
  let path = strings[0] ?? '';
  values.forEach((value, i) => {
    path += segment(value) + (strings[i + 1] ?? '');
  });
  return path;
}

function segment(value: string | number): string {
  const text = String(value);
  if (text === '' || text === '.' || text === '..' || /^(%2e|\.){1,2}$/i.test(text)) {
    throw new ToolgateError('CALLER_ERROR', 'An identifier in the request is empty or not valid.', {
      suggestedFix: 'Use the identifier exactly as it was given, e.g. from a search result.',
    });
  }
  return encodeURIComponent(text);
}
