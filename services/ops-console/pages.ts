import type { Presentation } from '../../libs/registry/present-call.js';
import type { CaseState, ReconciliationCase } from '../../libs/ports/case-store.js';
import { MAX_QUERY_OFFSET } from '../../libs/audit/query.js';
import { CASE_STATES } from '../../libs/reconcile/case-query.js';
import {
  AUDIT_SOURCES,
  type StoredAuditRecord,
  type VerifyReport,
  type WhoDidAnswer,
  type WhoDidEntry,
} from '../../libs/ports/audit-store.js';
import type { CaseView } from '../../libs/reconcile/operation-types.js';
import type { ApprovalEvent, ApprovalState } from '../../libs/ports/approval-store.js';
import type { ApprovalsListing, ApprovalView } from './approvals.js';
import { html, jsonBlock, lines, raw, when, type Html } from './html.js';
import { mayDo, type ConsoleRole } from './roles.js';
import type { SignInVia } from './session.js';

/** Rows per list page. */
export const PAGE_SIZE = 50;
/** The deepest page a list offers (the case store's largest offset). */
export const MAX_PAGE = Math.floor(MAX_QUERY_OFFSET / PAGE_SIZE);

/** Who is looking, for the header and the forms. */
export interface Viewer {
  readonly operator: string;
  readonly roles: readonly ConsoleRole[];
  /** The tenants they see, in claim form (`*`: all). */
  readonly tenants: readonly string[];
  readonly via: SignInVia;
  /** The session's CSRF token, put in every form's hidden field. */
  readonly csrf: string;
  /** The IANA time zone they read times in; undefined: UTC. */
  readonly timeZone?: string | undefined;
  /** The trace viewer's URL template (`{traceId}`), when the console has one. */
  readonly traceUrl?: string | undefined;
}

/** A flash line above the page body: what the last action did, or why it was refused. */
export interface Notice {
  readonly kind: 'ok' | 'error';
  readonly text: string;
}

const CSS = `
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2330;background:#f5f6f8}
header{display:flex;gap:1.5rem;align-items:center;padding:.6rem 1.2rem;background:#1d2330;color:#fff}
header a{color:#cfd6e4;text-decoration:none}header a:hover{color:#fff}header .who{margin-left:auto;color:#cfd6e4}
header form{display:inline}header button{background:none;border:1px solid #56607a;color:#cfd6e4;padding:.15rem .5rem;border-radius:3px;cursor:pointer}
main{padding:1rem 1.4rem;max-width:1300px}h1{font-size:1.3rem;margin:.2rem 0 1rem}h2{font-size:1.05rem;margin:1.4rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e8}th,td{text-align:left;padding:.35rem .55rem;border-bottom:1px solid #eceef2;vertical-align:top}
th{background:#eef0f4;font-weight:600;font-size:.85rem}td.note{white-space:pre-wrap;max-width:40rem}
.muted{color:#6b7385}.state{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.8rem;background:#e3e7ee}
.state.needs_manual{background:#ffe1b3}.state.open{background:#d6e8ff}.state.resolved_succeeded{background:#d4f2dc}.state.resolved_failed{background:#f7d4d4}
form.filters{display:flex;gap:.6rem;flex-wrap:wrap;align-items:end;margin-bottom:.8rem}label{display:flex;flex-direction:column;font-size:.8rem;color:#4a5264;gap:.15rem}
input,select,textarea{font:inherit;padding:.25rem .4rem;border:1px solid #c5cbd6;border-radius:3px;background:#fff}textarea{width:100%;min-height:3.2rem}
button.primary{background:#2f5fd0;color:#fff;border:0;padding:.35rem .8rem;border-radius:3px;cursor:pointer}button.danger{background:#b3261e;color:#fff;border:0;padding:.35rem .8rem;border-radius:3px;cursor:pointer}
.panel{background:#fff;border:1px solid #dde1e8;padding:.8rem 1rem;margin:.6rem 0}.actions{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:.8rem}
.notice{padding:.5rem .8rem;margin-bottom:.8rem;border-radius:3px}.notice.ok{background:#d4f2dc}.notice.error{background:#f7d4d4}
.why{background:#fff6e0;border-left:3px solid #e0a800;padding:.4rem .7rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}dt{color:#6b7385}dd{margin:0}
nav.tabs{display:flex;gap:.3rem;margin-bottom:.7rem}nav.tabs a{padding:.2rem .6rem;border:1px solid #c5cbd6;border-radius:3px;background:#fff;color:#1d2330;text-decoration:none}nav.tabs a.current{background:#1d2330;color:#fff}.count{font-weight:600}
header form.tz input{width:9rem;padding:.1rem .3rem;font-size:.8rem}.pager a{margin-left:.8rem}
pre.json{margin:0;font-size:.8rem;white-space:pre-wrap;word-break:break-all}code{font-size:.85rem}.ok{color:#17733a}.bad{color:#b3261e}
`;

/** A whole page: header with navigation and the operator, the notice, the body. */
export function layout(title: string, viewer: Viewer | undefined, body: Html, notice?: Notice): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>${title} · toolgate ops</title>
        <style>
          ${raw(CSS)}
        </style>
      </head>
      <body>
        <header>
          <strong>toolgate ops</strong>
          ${
            viewer === undefined
              ? ''
              : html`<a href="/cases">Cases</a><a href="/dead-letters">Dead letters</a
                  ><a href="/approvals">Approvals</a><a href="/audit">Audit</a><a href="/chains">Chains</a>
                  <span class="who">${signedInAs(viewer)}</span>
                  <form method="post" action="/prefs" class="tz">
                    ${csrfField(viewer)}<input
                      name="tz"
                      value="${viewer.timeZone ?? ''}"
                      placeholder="UTC"
                      aria-label="Time zone"
                      size="14"
                    /><button type="submit">Set time zone</button>
                  </form>
                  <form method="post" action="/logout">
                    ${csrfField(viewer)}<button type="submit">Sign out</button>
                  </form>`
          }
        </header>
        <main>
          ${notice === undefined ? '' : html`<div class="notice ${notice.kind}" role="status">${notice.text}</div>`}
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** `operator:ann · operator, approver · tenants t1, t2`, and whether the development login was used. */
function signedInAs(viewer: Viewer): string {
  const tenants = viewer.tenants.includes('*') ? 'all tenants' : `tenants ${viewer.tenants.join(', ')}`;
  return `operator:${viewer.operator} · ${viewer.roles.join(', ')} · ${tenants}${viewer.via === 'dev' ? ' · development login' : ''}`;
}

function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrf}" />`;
}

/**
 * The sign-in page: a link to the identity provider (`signInHref`, when one is configured) and,
 * only with the development switch, a pasted-token form (posted in the body, never in a URL) and the
 * name-and-role form. `notice` is shown above (e.g. "You have signed out").
 */
export function loginPage(devLogin: boolean, error?: string, signInHref?: string, notice?: Notice): Html {
  return layout(
    'Sign in',
    undefined,
    html`${
      signInHref === undefined
        ? ''
        : html`<div class="panel">
            <p><a class="primary" href="${signInHref}">Sign in with your identity provider</a></p>
          </div>`
    }
    ${
      devLogin
        ? html`<div class="panel">
              <h2>Sign-in token (development)</h2>
              <form method="post" action="/login">
                <label
                  >Sign-in token from your identity provider<textarea
                    name="token"
                    autocomplete="off"
                    required
                  ></textarea>
                </label>
                <p><button class="primary" type="submit">Sign in</button></p>
              </form>
            </div>
            <div class="panel">
              <h2>Development login</h2>
              <p class="muted">
                Enabled by OPS_CONSOLE_DEV_LOGIN=true: no token is checked. Never enable it outside
                development.
              </p>
              <form method="post" action="/login/dev">
                <label>Name<input name="operator" required pattern="[A-Za-z0-9._@-]{1,64}" /></label>
                <label
                  >Role<select name="role">
                    <option>viewer</option>
                    <option>operator</option>
                    <option>approver</option>
                  </select></label
                >
                <label
                  >Tenants (comma-separated; * for all)<input name="tenants" required placeholder="t1, t2"
                /></label>
                <p><button class="primary" type="submit">Sign in (development)</button></p>
              </form>
            </div>`
        : ''
    }`,
    error === undefined ? notice : { kind: 'error', text: error },
  );
}

/** The filters of the case and dead-letter lists, as read from the query string. */
export interface ListFilters {
  readonly state?: string;
  readonly tool?: string;
  readonly tenant?: string;
  readonly reason?: string;
  /** `lt1h`, `lt24h`, `gt1h`, `gt24h`, `gt7d`. */
  readonly age?: string;
  /** Free text searched in case id, dead-letter id, call id, trace id, tool and error message. */
  readonly q?: string;
  /** `oldest` (default) or `newest` first. */
  readonly sort?: string;
  /** 1-based. */
  readonly page: number;
}

/** One page of a case list, with the per-state counts of everything the filters (but state) match. */
export interface CaseList {
  readonly filters: ListFilters;
  readonly cases: readonly ReconciliationCase[];
  readonly hasMore: boolean;
  readonly counts: Readonly<Record<CaseState, number>>;
}

/** What the page after a POST action says; only these, so a link cannot put words in the console's mouth. */
export type DoneKey = 'resolved' | 'resolved-unaudited' | 'redriven-resubmitted' | 'redriven-checks';

/** The notice of the case page shown after an action (`?done=`), with the case's state now. */
export function caseDoneNotice(done: string, state: CaseState): Notice | undefined {
  switch (done) {
    case 'resolved':
      return { kind: 'ok', text: `Resolved: the case is now ${state}; audit record published.` };
    case 'resolved-unaudited':
      return {
        kind: 'ok',
        text: `Resolved: the case is now ${state}; the audit record could not be published yet.`,
      };
    case 'redriven-resubmitted':
      return { kind: 'ok', text: `Redriven: the case is now ${state}; the call was re-submitted.` };
    case 'redriven-checks':
      return { kind: 'ok', text: `Redriven: the case is now ${state}; another round of status checks.` };
    default:
      return undefined;
  }
}

/** The notice of the case list after a bulk action (`?done=bulk&action=&ok=&refused=`). */
export function doneNotice(q: URLSearchParams): Notice | undefined {
  if (q.get('done') !== 'bulk') return undefined;
  const count = (name: string) => {
    const n = Number(q.get(name));
    return Number.isInteger(n) && n >= 0 ? n : 0;
  };
  const action = q.get('action') === 'redrive' ? 'Redrive' : 'Resolve';
  const ok = count('ok');
  const refused = count('refused');
  return {
    kind: refused === 0 ? 'ok' : 'error',
    text: `${action} of the selected cases: ${ok} done, ${refused} refused${refused === 0 ? '' : ' (already moved, not allowed, or not found; each case page says why)'}.`,
  };
}

export const AGE_FILTERS: Readonly<Record<string, string>> = {
  lt1h: 'newer than 1 hour',
  lt24h: 'newer than 24 hours',
  gt1h: 'older than 1 hour',
  gt24h: 'older than 24 hours',
  gt7d: 'older than 7 days',
};

function filterForm(action: string, f: ListFilters, withReason: boolean): Html {
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}" ${raw(current === value ? ' selected' : '')}>${label}</option>`;
  return html`<form class="filters" method="get" action="${action}">
    <label
      >State<select name="state">
        ${option('', 'any', f.state)}${['open', 'needs_manual', 'resolved_succeeded', 'resolved_failed'].map((s) => option(s, s, f.state))}
      </select></label
    >
    ${
      withReason
        ? html`<label
            >Reason<select name="reason">
              ${option('', 'any', f.reason)}${['UNRESOLVED', 'EXHAUSTED', 'POISON'].map((s) => option(s, s, f.reason))}
            </select></label
          >`
        : ''
    }
    <label
      >Search<input name="q" value="${f.q ?? ''}" placeholder="call id, trace id, tool, error" size="28"
    /></label>
    <label>Tool<input name="tool" value="${f.tool ?? ''}" placeholder="issue_refund" /></label>
    <label>Tenant<input name="tenant" value="${f.tenant ?? ''}" placeholder="t1" /></label>
    <label
      >Age<select name="age">
        ${option('', 'any', f.age)}${Object.entries(AGE_FILTERS).map(([k, v]) => option(k, v, f.age))}
      </select></label
    >
    <label
      >Sort<select name="sort">
        ${option('oldest', 'oldest first', f.sort ?? 'oldest')}${option('newest', 'newest first', f.sort)}
      </select></label
    >
    <button class="primary" type="submit">Filter</button>
  </form>`;
}

/** The query string of `f` with `changes` applied (undefined removes a field); page 1 unless given. */
function listQuery(
  f: ListFilters,
  changes: Partial<Record<keyof ListFilters, string | number | undefined>>,
): string {
  const q = new URLSearchParams();
  const merged: Record<string, string | number | undefined> = { ...f, page: undefined, ...changes };
  for (const [k, v] of Object.entries(merged)) {
    // Page 1 is the default: left out, so a filtered list's link starts at its first page.
    if (v !== undefined && v !== '' && !(k === 'page' && v === 1)) q.set(k, String(v));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** Links to every state with its count (the other filters kept), and "any" with the total. */
function stateTabs(action: string, list: CaseList): Html {
  const total = CASE_STATES.reduce((sum, st) => sum + list.counts[st], 0);
  const tab = (state: string | undefined, label: string, n: number) =>
    html`<a
      class="tab${list.filters.state === state ? ' current' : ''}"
      href="${action}${listQuery(list.filters, { state })}"
      >${label} <span class="count">${n}</span></a
    >`;
  return html`<nav class="tabs" aria-label="States">
    ${tab(undefined, 'any', total)}${CASE_STATES.map((st) => tab(st, st, list.counts[st]))}
  </nav>`;
}

/** Which rows a page shows and links to the previous and next pages. */
function pager(action: string, list: CaseList): Html {
  const { page } = list.filters;
  const first = (page - 1) * PAGE_SIZE + 1;
  return html`<p class="muted pager">
    ${list.cases.length === 0 ? 'No rows' : `Rows ${first}–${first + list.cases.length - 1}`},
    ${list.filters.sort === 'newest' ? 'newest' : 'oldest'} first.
    ${page > 1 ? html`<a rel="prev" href="${action}${listQuery(list.filters, { page: page - 1 })}">← previous</a>` : ''}
    ${list.hasMore && page < MAX_PAGE ? html`<a rel="next" href="${action}${listQuery(list.filters, { page: page + 1 })}">next →</a>` : ''}
  </p>`;
}

function stateBadge(state: string): Html {
  return html`<span class="state ${state}">${state}</span>`;
}

/**
 * The reconciliation cases: state tabs with counts, filters and search, one page of rows, and —
 * for an operator — a bulk resolve or redrive of the selected rows with one reason.
 */
export function casesPage(viewer: Viewer, list: CaseList, nowMs: number, notice?: Notice): Html {
  const bulk = mayDo(viewer.roles, 'resolve');
  return layout(
    'Cases',
    viewer,
    html`${stateTabs('/cases', list)} ${filterForm('/cases', list.filters, true)}
      <table>
        <thead>
          <tr>
            ${bulk ? html`<th><span class="muted">select</span></th>` : ''}
            <th>Case</th>
            <th>State</th>
            <th>Reason</th>
            <th>Tool</th>
            <th>Tenant</th>
            <th>Resource</th>
            <th>Opened</th>
            <th>Last note</th>
          </tr>
        </thead>
        <tbody>
          ${
            list.cases.length === 0
              ? html`<tr>
                  <td colspan="9" class="muted">No case matches.</td>
                </tr>`
              : ''
          }
          ${list.cases.map(
            (c) =>
              html`<tr>
                ${
                  bulk
                    ? html`<td>
                        <input
                          type="checkbox"
                          name="case"
                          value="${c.caseId}"
                          form="bulk"
                          aria-label="select ${c.caseId}"
                        />
                      </td>`
                    : ''
                }
                <td><a href="/cases/${encodeURIComponent(c.caseId)}">${c.caseId}</a></td>
                <td>${stateBadge(c.state)}</td>
                <td>${c.reason}</td>
                <td>${c.tool ?? '–'}</td>
                <td>${c.tenant ?? '–'}</td>
                <td><code>${c.resourceKey ?? '–'}</code></td>
                <td>${when(c.createdAtMs, nowMs, viewer.timeZone)}</td>
                <td class="note">${lines(c.history.at(-1)?.note ?? '')}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${pager('/cases', list)}
      ${
        bulk
          ? html`<div class="panel">
              <h2>Selected cases</h2>
              <form id="bulk" method="post" action="/cases/bulk">
                ${csrfField(viewer)}
                <label
                  >Action<select name="action">
                    <option value="resolve-failed">resolve: failed (the effect did not happen)</option>
                    <option value="resolve-succeeded">resolve: succeeded (the effect happened)</option>
                    <option value="redrive">redrive (as each case's redrive rule allows)</option>
                  </select></label
                >
                <label
                  >Reason, for every selected case (required)<textarea name="note" required></textarea>
                </label>
                <p>
                  <button class="primary" type="submit">Apply to the selected cases</button>
                  <span class="muted">Each case is acted on, audited and refused on its own.</span>
                </p>
              </form>
            </div>`
          : ''
      }`,
    notice,
  );
}

/** The dead letters behind the cases: what failed and how; the raw payload of a poison letter. */
export function deadLettersPage(viewer: Viewer, list: CaseList, nowMs: number): Html {
  return layout(
    'Dead letters',
    viewer,
    html`${stateTabs('/dead-letters', list)} ${filterForm('/dead-letters', list.filters, true)}
      <table>
        <thead>
          <tr>
            <th>Dead letter</th>
            <th>Reason</th>
            <th>Error</th>
            <th>Tool</th>
            <th>Tenant</th>
            <th>Received</th>
            <th>Case</th>
          </tr>
        </thead>
        <tbody>
          ${
            list.cases.length === 0
              ? html`<tr>
                  <td colspan="7" class="muted">No dead letter matches.</td>
                </tr>`
              : ''
          }
          ${list.cases.map((c) => {
            const error = deadLetterError(c);
            return html`<tr>
              <td>
                <code>${c.deadLetterId}</code>
                ${hasRawPayload(c) ? html`<a href="/cases/${encodeURIComponent(c.caseId)}/raw">raw payload</a>` : ''}
              </td>
              <td>${c.reason}</td>
              <td><code>${error.code}</code> ${error.message}</td>
              <td>${c.tool ?? '–'}</td>
              <td>${c.tenant ?? '–'}</td>
              <td>${when(c.createdAtMs, nowMs, viewer.timeZone)}</td>
              <td><a href="/cases/${encodeURIComponent(c.caseId)}">${c.caseId}</a> ${stateBadge(c.state)}</td>
            </tr>`;
          })}
        </tbody>
      </table>
      ${pager('/dead-letters', list)}`,
  );
}

/** Whether the dead letter kept the undecodable event's bytes (a poison letter). */
function hasRawPayload(c: ReconciliationCase): boolean {
  return typeof c.context.rawPayloadBase64 === 'string' && c.context.rawPayloadBase64 !== '';
}

/**
 * A poison letter's raw payload as it arrived: where it was read from, its size, a hex dump, and
 * the bytes as UTF-8 text (invalid sequences as U+FFFD; hidden characters escaped like everywhere).
 */
export function rawPayloadPage(viewer: Viewer, c: ReconciliationCase): Html {
  const base64 = typeof c.context.rawPayloadBase64 === 'string' ? c.context.rawPayloadBase64 : '';
  const bytes = Buffer.from(base64, 'base64');
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '–');
  const dump: string[] = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = bytes.subarray(i, i + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    dump.push(`${i.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return layout(
    `Raw payload of ${c.deadLetterId}`,
    viewer,
    html`<p><a href="/cases/${encodeURIComponent(c.caseId)}">← case ${c.caseId}</a></p>
      <div class="panel">
        <dl>
          <dt>Reason</dt>
          <dd>${c.reason}</dd>
          <dt>Read from</dt>
          <dd>
            <code>${text(c.context.originalTopic)}</code> partition ${text(c.context.originalPartition)}
            offset ${text(c.context.originalOffset)}
          </dd>
          <dt>Key</dt>
          <dd><code>${text(c.context.originalKey)}</code></dd>
          <dt>Size</dt>
          <dd>${bytes.length} bytes</dd>
        </dl>
      </div>
      ${
        bytes.length === 0
          ? html`<p class="muted">The dead letter kept no raw payload.</p>`
          : html`<h2>Hex</h2>
              <div class="panel"><pre class="json">${lines(dump.join('\n'))}</pre></div>
              <h2>As UTF-8 text</h2>
              <div class="panel"><pre class="json">${bytes.toString('utf8')}</pre></div>`
      }`,
  );
}

/** The error a dead letter carried (the case context's `errorCode` and `errorMessage`, see case-model.ts). */
function deadLetterError(c: ReconciliationCase): { code: string; message: string } {
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  return { code: text(c.context.errorCode), message: text(c.context.errorMessage) };
}

/** One case: the call, its redacted arguments, the audit trail, the history, and the actions. */
export function casePage(
  viewer: Viewer,
  view: CaseView,
  args: Readonly<Record<string, unknown>> | null,
  trail: readonly StoredAuditRecord[],
  nowMs: number,
  notice?: Notice,
): Html {
  const c = view.case;
  const req = view.request;
  const canResolve = view.actions.includes('resolveByHand');
  const canRedrive = view.actions.includes('redrive');
  const may = (a: 'resolve' | 'redrive') => mayDo(viewer.roles, a);
  const action = encodeURIComponent(c.caseId);
  const redriveWhy =
    view.redrive.kind === 'refuse'
      ? `${view.redrive.detail} (${view.redrive.reason})`
      : view.redrive.kind === 'resubmit'
        ? 'A redrive re-submits the call to the calls topic: its tool is safe to run again.'
        : 'A redrive starts another round of status checks; nothing is re-submitted.';
  return layout(
    `Case ${c.caseId}`,
    viewer,
    html`<div class="panel">
        <dl>
          <dt>State</dt>
          <dd>${stateBadge(c.state)} <span class="muted">version ${c.version}</span></dd>
          <dt>Reason</dt>
          <dd>${c.reason}</dd>
          <dt>Call</dt>
          <dd><code>${c.callId ?? '–'}</code></dd>
          <dt>Tool</dt>
          <dd>${c.tool ?? '–'}${req?.toolVersion ? html` @ ${req.toolVersion}` : ''}</dd>
          <dt>Tenant</dt>
          <dd>${c.tenant ?? '–'}</dd>
          <dt>Caller</dt>
          <dd>${c.principalId ?? '–'}</dd>
          <dt>Resource</dt>
          <dd><code>${c.resourceKey ?? '–'}</code></dd>
          <dt>Trace id</dt>
          <dd>${traceLink(c.traceId, viewer.traceUrl)}</dd>
          <dt>Dead letter</dt>
          <dd>
            <code>${c.deadLetterId}</code>
            ${hasRawPayload(c) ? html`<a href="/cases/${action}/raw">raw payload</a>` : ''}
          </dd>
          <dt>Opened</dt>
          <dd>${when(c.createdAtMs, nowMs, viewer.timeZone)}</dd>
          <dt>Next check</dt>
          <dd>${when(c.nextCheckAtMs, nowMs, viewer.timeZone)}</dd>
          ${
            c.resolution === null
              ? ''
              : html`<dt>Resolution</dt>
                  <dd>by ${c.resolution.by}: ${c.resolution.note}</dd>`
          }
        </dl>
      </div>
      <h2>Arguments (redacted to the tool's audit allow-list)</h2>
      <div class="panel">${jsonBlock(args)}</div>
      <h2>Actions</h2>
      <div class="actions">
        <div class="panel">
          <h3>Resolve by hand</h3>
          ${
            !canResolve
              ? html`<p class="why">Not open to resolution: the case is ${c.state}.</p>`
              : !may('resolve')
                ? html`<p class="why">Your roles (${viewer.roles.join(', ')}) do not include operator.</p>`
                : html`<form method="post" action="/cases/${action}/resolve">
                    ${csrfField(viewer)}
                    <label
                      >Outcome<select name="outcome">
                        <option value="succeeded">succeeded: the effect happened</option>
                        <option value="failed">failed: the effect did not happen</option>
                      </select></label
                    >
                    <label>Reason (required)<textarea name="note" required></textarea></label>
                    <p><button class="primary" type="submit">Resolve</button></p>
                  </form>`
          }
        </div>
        <div class="panel">
          <h3>Redrive</h3>
          <p class="${view.redrive.kind === 'refuse' ? 'why' : 'muted'}">
            ${view.redrive.kind === 'refuse' ? 'Why not: ' : ''}${redriveWhy}
          </p>
          ${
            canRedrive && may('redrive')
              ? html`<form method="post" action="/cases/${action}/redrive">
                  ${csrfField(viewer)}
                  <label>Reason (required)<textarea name="note" required></textarea></label>
                  ${view.redrive.kind === 'resubmit' ? html`<label>Principal assertion for the re-submission (dead letters keep none)<textarea name="assertion" autocomplete="off"></textarea></label>` : ''}
                  <p><button class="primary" type="submit">Redrive</button></p>
                </form>`
              : canRedrive
                ? html`<p class="why">Your roles (${viewer.roles.join(', ')}) do not include operator.</p>`
                : ''
          }
        </div>
      </div>
      <h2>Audit trail of the call (${trail.length})</h2>
      ${auditTable(trail, nowMs, viewer.timeZone)}
      <h2>Reconciler history (${c.history.length})</h2>
      ${transitionsTable(c.history, nowMs, viewer.timeZone)}
      <h2>Status checks (${c.statusChecks.length})</h2>
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Answer</th>
          </tr>
        </thead>
        <tbody>
          ${c.statusChecks.map(
            (s) =>
              html`<tr>
                <td>${when(s.atMs, nowMs, viewer.timeZone)}</td>
                <td>${jsonBlock(s.answer)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2>Attempts as dead-lettered (${c.attemptHistory.length})</h2>
      ${attemptsTable(c.attemptHistory, nowMs, viewer.timeZone)}`,
    notice,
  );
}

/**
 * The attempts a dead letter recorded, times shown as times (in the viewer's zone) and durations in
 * ms; an entry of another shape is shown as JSON.
 */
function attemptsTable(attempts: readonly unknown[], nowMs: number, timeZone: string | undefined): Html {
  if (attempts.length === 0) return html`<p class="muted">None recorded.</p>`;
  return html`<table>
    <thead>
      <tr>
        <th>Attempt</th>
        <th>Started</th>
        <th>Duration</th>
        <th>Result</th>
      </tr>
    </thead>
    <tbody>
      ${attempts.map((a) => {
        const r = (typeof a === 'object' && a !== null ? a : {}) as Record<string, unknown>;
        if (typeof r.startedAtMs !== 'number')
          return html`<tr>
            <td colspan="4">${jsonBlock(a)}</td>
          </tr>`;
        return html`<tr>
          <td>${typeof r.attempt === 'number' ? r.attempt : '–'}</td>
          <td>${when(r.startedAtMs, nowMs, timeZone)}</td>
          <td>${typeof r.durationMs === 'number' ? `${r.durationMs} ms` : '–'}</td>
          <td><code>${typeof r.result === 'string' ? r.result : JSON.stringify(r.result ?? null)}</code></td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/**
 * A trace id, linked to the trace viewer when the console has a URL template (`{traceId}` replaced
 * by the URL-encoded id); as text otherwise.
 */
export function traceLink(traceId: string | null | undefined, template: string | undefined): Html {
  if (traceId === null || traceId === undefined || traceId === '') return html`<code>–</code>`;
  if (template === undefined) return html`<code>${traceId}</code>`;
  const href = template.replaceAll('{traceId}', encodeURIComponent(traceId));
  return html`<a href="${href}" rel="noopener noreferrer" target="_blank"><code>${traceId}</code></a>`;
}

/** Audit records as a table: who, source, outcome, every decision's reason. */
export function auditTable(records: readonly StoredAuditRecord[], nowMs: number, timeZone?: string): Html {
  return html`<table>
    <thead>
      <tr>
        <th>When</th>
        <th>Principal</th>
        <th>Source</th>
        <th>Tool</th>
        <th>Outcome</th>
        <th>Decisions</th>
        <th>Chain · seq</th>
      </tr>
    </thead>
    <tbody>
      ${
        records.length === 0
          ? html`<tr>
              <td colspan="7" class="muted">No audit record (yet: records arrive through the audit sink).</td>
            </tr>`
          : ''
      }
      ${records.map(
        (r) =>
          html`<tr>
            <td>${when(r.recordedAtMs, nowMs, timeZone)}</td>
            <td>${r.record.principalId}</td>
            <td>${r.source}</td>
            <td>${r.record.tool}</td>
            <td>${r.record.outcome}</td>
            <td class="note">
              ${r.record.decisions.filter((d) => d.decision !== 'pass' || d.reason !== undefined).map((d) => html`<div>${d.stage}: ${d.decision}${d.reason === undefined ? '' : html` — ${d.reason}`}</div>`)}
            </td>
            <td><code>${r.chain}</code> · ${r.seq}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The approval request states, in the order the queue's tabs show them. */
const QUEUE_STATES: readonly ApprovalState[] = ['pending', 'approved', 'rejected', 'expired', 'redeemed'];

/**
 * The approvals queue: tabs with how many requests in the operator's tenants are in each state, one
 * page of the chosen state (oldest first) with who asks, for whom, why and when it expires, and a
 * link to the next page. Each row opens the decision page.
 */
export function approvalsPage(
  viewer: Viewer,
  listing: ApprovalsListing,
  state: ApprovalState,
  nowMs: number,
  notice?: Notice,
): Html {
  return layout(
    'Approvals',
    viewer,
    html`<p class="muted">
        Requests the preview gate recorded when a confirm needed a person's approval. Approving releases
        exactly the recorded call (same principal, tool, arguments and resource, once); rejecting ends it.
      </p>
      <p class="tabs">
        ${QUEUE_STATES.map(
          (s) =>
            html`<a href="/approvals?state=${s}" ${s === state ? raw('aria-current="page"') : ''}
              >${s} (<span data-count="${s}">${listing.counts[s]}</span>)</a
            > `,
        )}
      </p>
      ${
        listing.items.length === 0
          ? html`<p class="muted">
              ${state === 'pending' ? 'Nothing waits for approval.' : `No ${state} requests.`}
            </p>`
          : html`<table>
              <thead>
                <tr>
                  <th>Request</th>
                  <th>Tool</th>
                  <th>Requested by</th>
                  <th>On behalf of</th>
                  <th>Why</th>
                  <th>Approvals</th>
                  <th>Tenant</th>
                  <th>Asked</th>
                  <th>Expires</th>
                </tr>
              </thead>
              <tbody>
                ${listing.items.map(
                  ({ request: r }) =>
                    html`<tr data-request="${r.id}">
                      <td>
                        <a href="/approvals/${encodeURIComponent(r.id)}"><code>${r.id}</code></a>
                      </td>
                      <td>${r.tool}</td>
                      <td class="requester">${r.requester}</td>
                      <td class="on-behalf-of">${r.onBehalfOf ?? '–'}</td>
                      <td class="note">${r.rule.reason}</td>
                      <td>${r.approvals.length} of ${r.rule.approvers}</td>
                      <td>${r.tenant}</td>
                      <td>${when(r.createdAtMs, nowMs)}</td>
                      <td>${new Date(r.expiresAtMs).toISOString()}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${
        listing.next === undefined
          ? ''
          : html`<p>
              <a href="/approvals?state=${state}&amp;after=${encodeURIComponent(listing.next)}">Next page</a>
            </p>`
      }`,
    notice,
  );
}

/** One change of state: a case's or an approval request's history. */
interface Transition {
  readonly atMs: number;
  readonly from: string;
  readonly to: string;
  readonly by: string;
  readonly note: string;
}

/** A history of transitions, oldest first as given, times in the viewer's zone. */
function transitionsTable(rows: readonly Transition[], nowMs: number, timeZone: string | undefined): Html {
  return html`<table>
    <thead>
      <tr>
        <th>When</th>
        <th>From</th>
        <th>To</th>
        <th>By</th>
        <th>Note</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (t) =>
          html`<tr>
            <td>${when(t.atMs, nowMs, timeZone)}</td>
            <td>${t.from}</td>
            <td>${t.to}</td>
            <td>${t.by}</td>
            <td class="note">${lines(t.note)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * A call as `presentParsedCall` rendered it: one line per field, decisive fields first and marked,
 * then the withheld fields by name; or why it cannot be shown (and so not approved).
 */
function presentedCall(shown: Presentation): Html {
  if (!shown.ok) return html`<p class="refusal">Cannot be shown in full: ${shown.reason}</p>`;
  return html`<pre class="presented-call">${lines(shown.call.text)}</pre>
    <p class="muted">
      Decisive:
      ${shown.call.fields.filter((f) => f.decisive).map((f, i) => html`${i === 0 ? '' : ', '}<b>${f.name}</b>`)}
    </p>`;
}

/**
 * One approval request, for the person deciding it: who asks, for whom, why (the rule and its reason,
 * with the order's total), how many distinct approvals it needs and has, the arguments the call will
 * run with (the tool's allow-list), its history, and, while pending, the approve/reject form.
 */
export function approvalPage(
  viewer: Viewer,
  view: ApprovalView,
  history: readonly ApprovalEvent[],
  nowMs: number,
  notice?: Notice,
): Html {
  const r = view.request;
  const may = mayDo(viewer.roles, 'approve');
  return layout(
    `Approval request ${r.id}`,
    viewer,
    html`<div class="panel">
        <dl>
          <dt>Request</dt>
          <dd><code>${r.id}</code> ${stateBadge(r.state)}</dd>
          <dt>Tool</dt>
          <dd>${r.tool} ${r.toolVersion}</dd>
          <dt>Requested by</dt>
          <dd class="requester">${r.requester}</dd>
          <dt>On behalf of</dt>
          <dd class="on-behalf-of">${r.onBehalfOf ?? '– (acts for itself)'}</dd>
          <dt>Why</dt>
          <dd class="reason">${r.rule.reason} <span class="muted">(rule ${r.rule.rule})</span></dd>
          <dt>Approvals</dt>
          <dd>
            ${r.approvals.length} of ${r.rule.approvers} distinct
            people${
              r.approvals.length === 0
                ? ''
                : html`: ${r.approvals.map((a, i) => html`${i === 0 ? '' : ', '}${a.by} (${a.note})`)}`
            }
          </dd>
          <dt>Arguments</dt>
          <dd class="arguments">${presentedCall(view.shown)}</dd>
          <dt>Tenant</dt>
          <dd>${r.tenant}</dd>
          <dt>Asked</dt>
          <dd>${when(r.createdAtMs, nowMs)}</dd>
          <dt>Expires</dt>
          <dd>${new Date(r.expiresAtMs).toISOString()}</dd>
          ${
            r.origin === undefined
              ? ''
              : html`<dt>Trace id</dt>
                  <dd><code>${r.origin.traceId}</code></dd>`
          }
        </dl>
      </div>
      ${
        r.state !== 'pending'
          ? ''
          : may
            ? html`<form method="post" action="/approvals/${encodeURIComponent(r.id)}/decide">
                ${csrfField(viewer)}
                <p class="muted">
                  Four eyes: the requester, the user it acts for and anyone who already approved cannot
                  approve.
                </p>
                <label>Reason (required)<textarea name="reason" required></textarea></label>
                <p>
                  ${view.shown.ok ? html`<button class="primary" type="submit" name="verdict" value="approve">Approve</button>` : ''}
                  <button class="danger" type="submit" name="verdict" value="reject">Reject</button>
                </p>
              </form>`
            : html`<p class="why">Your roles (${viewer.roles.join(', ')}) do not include approver.</p>`
      }
      <h2>History</h2>
      ${transitionsTable(history, nowMs, viewer.timeZone)}
      <p><a href="/approvals">Back to the queue</a></p>`,
    notice,
  );
}

/** One page of an audit search's records. */
export interface AuditRecordsPage {
  readonly records: readonly StoredAuditRecord[];
  readonly hasMore: boolean;
  /** 1-based. */
  readonly page: number;
  readonly sort: 'newest' | 'oldest';
}

/** `0`, or `51–100` of a page. */
function recordsRange(p: AuditRecordsPage): string {
  if (p.records.length === 0) return '0';
  const first = (p.page - 1) * PAGE_SIZE + 1;
  return `${first}–${first + p.records.length - 1}`;
}

/** "Who did, who tried" for one resource, and the records of one principal or source. */
export function auditPage(
  viewer: Viewer,
  q: { resource?: string; tool?: string; tenant?: string; principal?: string; source?: string },
  who: WhoDidAnswer | undefined,
  records: AuditRecordsPage | undefined,
  nowMs: number,
): Html {
  const link = (changes: { page?: number; sort?: string }) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...q, sort: records?.sort, ...changes }))
      if (v !== undefined && v !== '' && !(k === 'page' && v === 1) && !(k === 'sort' && v === 'newest'))
        params.set(k, String(v));
    const text = params.toString();
    return `/audit${text === '' ? '' : `?${text}`}`;
  };
  const whoTable = (rows: readonly WhoDidEntry[]) =>
    html`<table>
      <thead>
        <tr>
          <th>When</th>
          <th>Principal</th>
          <th>Tool</th>
          <th>Outcome</th>
          <th>Stage · reason</th>
          <th>Trace id</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length === 0
            ? html`<tr>
                <td colspan="6" class="muted">nobody</td>
              </tr>`
            : ''
        }
        ${rows.map(
          (e) =>
            html`<tr>
              <td>${when(e.atMs, nowMs, viewer.timeZone)}</td>
              <td>${e.principalId}</td>
              <td>${e.tool}</td>
              <td>${e.outcome}</td>
              <td class="note">${e.stage ?? ''}${e.reason === undefined ? '' : html` — ${e.reason}`}</td>
              <td>${traceLink(e.traceId, viewer.traceUrl)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  return layout(
    'Audit',
    viewer,
    html`<form class="filters" method="get" action="/audit">
        <label
          >Resource (full key, or the id with a tool)<input
            name="resource"
            value="${q.resource ?? ''}"
            placeholder="t1:order:O-5512"
        /></label>
        <label>Tool<input name="tool" value="${q.tool ?? ''}" /></label
        ><label>Tenant<input name="tenant" value="${q.tenant ?? ''}" /></label>
        <label
          >Principal<input name="principal" value="${q.principal ?? ''}" placeholder="operator:ann"
        /></label>
        <label
          >Source<select name="source">
            ${['', ...AUDIT_SOURCES].map((s) => html`<option value="${s}" ${raw(q.source === s ? ' selected' : '')}>${s === '' ? 'any' : s}</option>`)}
          </select></label
        >
        <button class="primary" type="submit">Search</button>
      </form>
      ${
        who === undefined
          ? ''
          : html`<h2>Did (${who.did.length}): the tool succeeded</h2>
              ${whoTable(who.did)}
              <h2>Tried (${who.tried.length}): refused, failed, unresolved or duplicate</h2>
              ${whoTable(who.tried)}`
      }
      ${
        records === undefined
          ? ''
          : html`<h2>Records (${recordsRange(records)}, ${records.sort} first)</h2>
              <p>
                ${
                  records.sort === 'newest'
                    ? html`<a href="${link({ sort: 'oldest' })}">oldest first</a>`
                    : html`<a href="${link({ sort: 'newest' })}">newest first</a>`
                }
              </p>
              ${auditTable(records.records, nowMs, viewer.timeZone)}
              <p class="muted pager">
                ${records.page > 1 ? html`<a rel="prev" href="${link({ page: records.page - 1 })}">← previous</a>` : ''}
                ${records.hasMore && records.page < MAX_PAGE ? html`<a rel="next" href="${link({ page: records.page + 1 })}">next →</a>` : ''}
              </p>`
      }`,
  );
}

/** The hash chain's verify status, one row per tenant. */
export function chainsPage(
  viewer: Viewer,
  reports: readonly { chain: string; report: VerifyReport }[],
): Html {
  return layout(
    'Audit hash chains',
    viewer,
    html`<p class="muted">
        Each tenant's audit records form one hash chain; every record is re-hashed and checked against its
        predecessor on each visit of this page.
      </p>
      <table>
        <thead>
          <tr>
            <th>Tenant (chain)</th>
            <th>Status</th>
            <th>Records checked</th>
            <th>Head seq</th>
            <th>Head hash / first broken link</th>
          </tr>
        </thead>
        <tbody>
          ${
            reports.length === 0
              ? html`<tr>
                  <td colspan="5" class="muted">No chain yet.</td>
                </tr>`
              : ''
          }
          ${reports.map(({ chain, report }) =>
            report.ok
              ? html`<tr>
                  <td>${chain}</td>
                  <td class="ok">verified</td>
                  <td>${report.checked}</td>
                  <td>${report.heads[chain]?.seq ?? 0}</td>
                  <td><code>${report.heads[chain]?.hash ?? ''}</code></td>
                </tr>`
              : html`<tr>
                  <td>${chain}</td>
                  <td class="bad">BROKEN</td>
                  <td>${report.checked}</td>
                  <td>–</td>
                  <td>seq ${report.firstBrokenSeq}: ${report.reason} — ${report.detail}</td>
                </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

/** A page that only says something (not found, refused). */
export function messagePage(viewer: Viewer | undefined, title: string, text: string): Html {
  return layout(title, viewer, html`<p>${text}</p>`);
}
