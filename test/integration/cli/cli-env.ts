import { DATABASE_URL } from '../../helpers/env.js';

/** DATABASE_URL pointed at one test schema (pg reads `options` from the URL), as an operator would. */
export function databaseUrlFor(schema: string): string {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path="${schema}"`);
  return url.href;
}
