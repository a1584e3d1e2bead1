/** US dollars (as the model writes them, e.g. 49.99) to integer cents, rounding half away from zero. */
export function dollarsToCents(dollars: number): number {
  return Math.sign(dollars) * Math.round(Math.abs(dollars) * 100);
}

/** Integer cents to US dollars (4999 → 49.99). */
export function centsToDollars(cents: number): number {
  return cents / 100;
}

/** `$49.99`, for messages the model reads. */
export function formatDollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
