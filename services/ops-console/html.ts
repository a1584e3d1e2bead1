/**
 * Escaped HTML: every interpolated value is escaped unless it is itself {@link Html} (built by this
 * tag or {@link raw}), so text from cases, audit records or requests can never become markup.
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
  return escapeHtml(String(part));
}

/** The tagged template: `html\`<td>${value}</td>\``, values escaped, arrays joined. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** An ISO timestamp and a relative age, e.g. `2026-01-02 10:00:00Z (3h ago)`. */
export function when(ms: number | null | undefined, nowMs: number): Html {
  if (ms === null || ms === undefined) return html`<span class="muted">–</span>`;
  const iso = new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');
  return html`<time datetime="${new Date(ms).toISOString()}">${iso}</time>
    <span class="muted">(${age(nowMs - ms)})</span>`;
}

/** A duration in the largest sensible unit: `45s`, `12m`, `3h`, `2d`. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** A JSON value, pretty-printed in a `<pre>`. */
export function jsonBlock(value: unknown): Html {
  return html`<pre class="json">${JSON.stringify(value, null, 2) ?? 'null'}</pre>`;
}
