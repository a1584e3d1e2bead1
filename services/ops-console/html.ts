import { displaySafe } from '../../libs/core/display-text.js';

/**
 * Escaped HTML: every interpolated value is escaped unless it is itself {@link Html} (built by this
 * tag or {@link raw}), so text from cases, audit records or requests can never become markup, and
 * shown display-safe (libs/core/display-text.ts): a hidden or bidirectional character reads as its
 * escape (`\u{202E}`), so a stored `refund \u202E$ 00.1\u202C` never reads "refund 1.00 $".
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Markup that is already safe (a constant, or something built with {@link html}). */
export function raw(text: string): Html {
  return new Html(text);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `value` as HTML text (also safe inside a double- or single-quoted attribute). */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join('');
  return escapeHtml(displaySafe(String(part)));
}

/** The tagged template: `html\`<td>${value}</td>\``, values escaped, arrays joined. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/**
 * A time and a relative age: in UTC, e.g. `2026-01-02 10:00:00Z (3h ago)`, or in `timeZone` (an
 * IANA zone the viewer chose) with its offset, e.g. `2026-01-02 11:00:00 GMT+1 (3h ago)`. The
 * `datetime` attribute is always the UTC ISO time.
 */
export function when(ms: number | null | undefined, nowMs: number, timeZone?: string): Html {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return html`<span class="muted">–</span>`;
  return html`<time datetime="${new Date(ms).toISOString()}">${timeText(ms, timeZone)}</time>
    <span class="muted">(${age(nowMs - ms)})</span>`;
}

/** `ms` as `YYYY-MM-DD HH:MM:SSZ`, or in `timeZone` as `YYYY-MM-DD HH:MM:SS GMT+1`. */
export function timeText(ms: number, timeZone?: string): string {
  if (timeZone === undefined)
    return new Date(ms)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d{3}Z$/, 'Z');
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'shortOffset',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

/** A duration in the largest sensible unit: `45s`, `12m`, `3h`, `2d`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/**
 * Text whose line breaks are its structure (a note typed in a textarea): each line display-safe,
 * the line feeds kept, so the page shows the lines and every other hidden character as an escape.
 */
export function lines(text: string): Html {
  return raw(
    text
      .split('\n')
      .map((line) => escapeHtml(displaySafe(line)))
      .join('\n'),
  );
}

/**
 * A JSON value, pretty-printed in a `<pre>`. JSON text never holds a raw line feed inside a string
 * (it is written `\n`), so the line feeds are the layout's and stay; string contents are
 * display-safe like every other value.
 */
export function jsonBlock(value: unknown): Html {
  return html`<pre class="json">${lines(JSON.stringify(value, null, 2) ?? 'null')}</pre>`;
}
