import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AUDIT_SOURCES,
  type AuditSource,
  type AuditStore,
  type VerifyReport,
  type WhoDidTarget,
} from '../../libs/ports/audit-store.js';
import type { CaseFilter, CaseState, ReconciliationCase } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { Logger } from '../../libs/ports/logger.js';
import { redactArguments } from '../../libs/pipeline/build-audit-record.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { CaseView, OperationResult, Operations } from '../../libs/reconcile/operation-types.js';
import { resolveCaseTool } from '../../libs/reconcile/resolve-tool.js';
import type { ApprovalsListing, ApprovalsQueue } from './approvals.js';
import { APPROVAL_STATES, type ApprovalState } from '../../libs/ports/approval-store.js';
import type { TenantScope } from '../../libs/core/tenant-scope.js';
import type { Html } from './html.js';
import {
  AGE_FILTERS,
  LIST_LIMIT,
  approvalsPage,
  approvalPage,
  auditPage,
  casePage,
  casesPage,
  chainsPage,
  deadLettersPage,
  loginPage,
  messagePage,
  type ListFilters,
  type Notice,
  type Viewer,
} from './pages.js';
import { CONSOLE_ROLES, mayDo, rolesFor, type ConsoleAction, type ConsoleRole } from './roles.js';
import type { SessionStore } from '../../libs/ports/session-store.js';
import { OIDC_CALLBACK_PATH } from './config.js';
import { PENDING_SIGN_IN_TTL_MS, parsePendingSignIn, returnPathOr, type OidcSignIn } from './oidc.js';
import { sessionCookieName, type OperatorSession, type OperatorSessions } from './session.js';
import { SignInRefused, type OperatorTokens } from './sign-in.js';

/** What the console's pages and actions run on. */
export interface ConsoleDeps {
  /** The reconciler's operations (libs/reconcile/operations.ts), as the CLI's dlq commands use them. */
  readonly operations: Operations;
  /** The executors' tools: a case's arguments are shown through its tool's audit allow-list. */
  readonly tools: ToolResolver;
  readonly audit: AuditStore;
  /** The audit chains (tenants) to verify one by one. */
  readonly chains: () => Promise<readonly string[]>;
  readonly approvals: ApprovalsQueue;
  /** Server-side sessions: the cookie carries only their id. */
  readonly sessions: OperatorSessions;
  /** Sign-in at the OpenID Connect provider; undefined only with the development login. */
  readonly oidc: OidcSignIn | undefined;
  /** Sign-ins started at the provider and not yet finished (single use, short-lived). */
  readonly pendingSignIns: SessionStore;
  /** Keys for bearer tokens (scripts) and, with the development switch, pasted tokens. */
  readonly tokens: OperatorTokens | undefined;
  /** The development sign-ins (pasted token, name and role): only when explicitly switched on. */
  readonly devLogin: boolean;
  /** The public origin; every POST must come from it (Origin, else Referer). */
  readonly origin: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The largest form body accepted (a reason and an assertion fit easily). */
const MAX_BODY_BYTES = 64 * 1024;

/** A request refused before it did anything, with the status and the sentence to show. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The signed-in operator of a request and how they proved it. */
/**
 * The tenants the person behind `who` may see and decide approvals in. Sessions carry no tenants yet,
 * so every operator sees all of them; this is the one place that changes when they do.
 */
function scopeOf(_who: Who): TenantScope {
  return { all: true };
}

interface Who {
  readonly session: OperatorSession;
  /** A bearer token on the request itself: no cookie, so nothing for a forged request to ride on. */
  readonly bearer: boolean;
}

/**
 * The console as one node:http request handler. Every route names the action it performs; the
 * handler signs the operator in (session cookie, or a bearer token on the request), checks their
 * role for that action, and — for every POST — the Origin (else Referer) against the configured
 * origin and, for cookie sessions, the CSRF token of the hidden `_csrf` field, all before the action
 * runs. Resolutions and redrives go through the reconciler's operations with `by` set to the operator,
 * so they are audited under `operator:<id>` with source `operator`, the reason and the case; preview
 * decisions are audited the same way by the approvals queue. Pages carry no secret: the CSRF token
 * is per session and useless without the HttpOnly cookie. Nothing logged carries a token.
 */
export function createConsoleHandler(
  deps: ConsoleDeps,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const secure = deps.origin.startsWith('https:');
  const cookieName = sessionCookieName(secure);
  const signInCookie = secure ? '__Host-tg_ops_signin' : 'tg_ops_signin';
  const cookieAttrs = ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])].join('; ');
  // Sign-out ends the provider's session too: the logout form's redirect goes there, and a form's
  // redirects are held to form-action.
  const formAction = deps.oidc === undefined ? "'self'" : `'self' ${deps.oidc.issuerOrigin}`;
  /** Where a signed-out browser starts signing in, returning to `next` afterwards. */
  const signInHref = (next: string): string =>
    deps.oidc === undefined ? '/login' : `/login/start?next=${encodeURIComponent(returnPathOr(next))}`;

  const viewerOf = (who: Who): Viewer => ({
    operator: who.session.operator,
    roles: who.session.roles,
    via: who.session.via,
    csrf: deps.sessions.csrfToken(who.session),
  });

  const authenticate = async (req: IncomingMessage): Promise<Who | undefined> => {
    const header = req.headers.authorization;
    if (header !== undefined && /^Bearer /i.test(header)) {
      if (deps.tokens === undefined)
        throw new Refusal(401, 'Bearer tokens are not accepted: no identity provider keys are configured.');
      let op;
      try {
        op = await deps.tokens.verify(header.slice(7));
      } catch (err) {
        throw new Refusal(401, err instanceof SignInRefused ? err.message : 'The bearer token was refused.');
      }
      return { session: deps.sessions.transient(op, 'token', op.exp), bearer: true };
    }
    const session = await deps.sessions.resume(cookies(req)[cookieName]);
    return session === undefined ? undefined : { session, bearer: false };
  };

  /**
   * Sets (or, with undefined, clears) the session cookie: only the random session id, HttpOnly,
   * SameSite=Lax (a link followed from a pager or chat arrives signed in; a cross-site POST does
   * not carry it), Secure and `__Host-` on https, living no longer than the session.
   */
  const setSession = (res: ServerResponse, session: OperatorSession | undefined): void => {
    res.appendHeader(
      'set-cookie',
      session === undefined
        ? `${cookieName}=; Max-Age=0; ${cookieAttrs}`
        : `${cookieName}=${session.sid}; Max-Age=${Math.max(1, session.exp - Math.floor(deps.clock.now() / 1000))}; ${cookieAttrs}`,
    );
  };

  /** Starts a sign-in at the provider and sends the browser there, to come back to `next`. */
  const startSignIn = async (res: ServerResponse, oidc: OidcSignIn, next: string): Promise<void> => {
    const begun = await oidc.begin(returnPathOr(next)).catch((err: unknown) => {
      deps.logger.warn(
        { reason: err instanceof Error ? err.message.slice(0, 200) : 'unknown' },
        'ops console: the identity provider cannot be reached',
      );
      throw new Refusal(503, 'The identity provider cannot be reached just now. Try again in a moment.');
    });
    const { url, pending } = begun;
    const id = randomBytes(32).toString('base64url');
    await deps.pendingSignIns.put(id, JSON.stringify(pending), PENDING_SIGN_IN_TTL_MS);
    res.appendHeader(
      'set-cookie',
      `${signInCookie}=${id}; Max-Age=${PENDING_SIGN_IN_TTL_MS / 1000}; ${cookieAttrs}`,
    );
    redirect(res, url);
  };

  /**
   * The provider's callback: the pending sign-in named by this browser's sign-in cookie is taken
   * (single use), the callback checked against it (state, PKCE, nonce, ID token), a session started,
   * and the browser sent to the page it first asked for.
   */
  const finishSignIn = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    res.appendHeader('set-cookie', `${signInCookie}=; Max-Age=0; ${cookieAttrs}`);
    const oidc = deps.oidc;
    if (oidc === undefined)
      return send(res, 404, messagePage(undefined, 'Not found', 'There is no such page.'));
    const id = cookies(req)[signInCookie];
    const pending =
      id === undefined || id === '' ? undefined : parsePendingSignIn(await deps.pendingSignIns.take(id));
    if (pending === undefined) {
      return send(
        res,
        400,
        loginPage(
          deps.devLogin,
          'This sign-in was not started here, was already used, or took too long. Sign in again.',
          signInHref('/cases'),
        ),
      );
    }
    let signedIn;
    try {
      signedIn = await oidc.finish(url, pending);
    } catch (err) {
      if (!(err instanceof SignInRefused)) throw err;
      deps.logger.warn({ reason: err.message }, 'ops console: sign-in refused');
      return send(res, 401, loginPage(deps.devLogin, err.message, signInHref(pending.returnTo)));
    }
    const session = await deps.sessions.start(signedIn.identity, 'oidc', signedIn.tokens);
    setSession(res, session);
    deps.logger.info(
      { operator: session.operator, roles: session.roles, tenants: session.tenants },
      'ops console: signed in',
    );
    return redirect(res, pending.returnTo);
  };

  /** Origin, else Referer, must be the console's own: a cross-site form post is refused unread. */
  const checkOrigin = (req: IncomingMessage): void => {
    const origin = req.headers.origin;
    let from: string | undefined = typeof origin === 'string' && origin !== 'null' ? origin : undefined;
    if (from === undefined && typeof req.headers.referer === 'string') {
      try {
        from = new URL(req.headers.referer).origin;
      } catch {
        from = undefined;
      }
    }
    if (from !== deps.origin)
      throw new Refusal(403, 'Refused: the request does not come from this console (Origin check).');
  };

  const requireRole = (who: Who, action: ConsoleAction): void => {
    if (!mayDo(who.session.roles, action)) {
      deps.logger.warn({ operator: who.session.operator, action }, 'ops console: action refused by role');
      throw new Refusal(
        403,
        `Refused: ${action} needs the ${rolesFor(action).join(' or ')} role; you have ${who.session.roles.join(', ') || 'none'}.`,
      );
    }
  };

  const requireCsrf = (who: Who, form: URLSearchParams): void => {
    if (who.bearer) return;
    if (!deps.sessions.checkCsrf(who.session, form.get('_csrf') ?? undefined)) {
      deps.logger.warn({ operator: who.session.operator }, 'ops console: CSRF token missing or wrong');
      throw new Refusal(
        403,
        'Refused: the form’s CSRF token is missing or wrong. Reload the page and try again.',
      );
    }
  };

  const send = (res: ServerResponse, status: number, page: Html): void => {
    const body = page.text;
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
    });
    res.end(body);
  };
  const redirect = (res: ServerResponse, to: string): void => {
    res.writeHead(303, { location: to, 'cache-control': 'no-store' });
    res.end();
  };

  const renderCase = async (
    who: Who,
    caseId: string,
    status: number,
    res: ServerResponse,
    notice?: Notice,
  ) => {
    const view = await deps.operations.showCase(caseId);
    if (view === undefined)
      return send(res, 404, messagePage(viewerOf(who), 'Not found', `There is no case ${caseId}.`));
    const trail =
      view.case.callId === null ? [] : await deps.audit.query({ callId: view.case.callId, limit: 1000 });
    send(
      res,
      status,
      casePage(viewerOf(who), view, shownArguments(deps.tools, view), trail, deps.clock.now(), notice),
    );
  };

  const renderApprovals = async (who: Who, q: URLSearchParams, res: ServerResponse) => {
    const state = q.get('state') ?? 'pending';
    if (!(APPROVAL_STATES as readonly string[]).includes(state)) throw new Refusal(400, 'Unknown state.');
    const after = q.get('after') ?? undefined;
    let listing: ApprovalsListing;
    try {
      listing = await deps.approvals.list(scopeOf(who), {
        state: state as ApprovalState,
        ...(after === undefined ? {} : { after }),
      });
    } catch (err) {
      if (err instanceof RangeError) throw new Refusal(400, 'That is not a page of this list.');
      throw err;
    }
    send(res, 200, approvalsPage(viewerOf(who), listing, state as ApprovalState, deps.clock.now()));
  };

  const renderApproval = async (
    who: Who,
    id: string,
    status: number,
    res: ServerResponse,
    notice?: Notice,
  ) => {
    const scope = scopeOf(who);
    const view = await deps.approvals.find(scope, id);
    if (view === undefined)
      return send(res, 404, messagePage(viewerOf(who), 'Not found', `There is no approval request ${id}.`));
    const history = await deps.approvals.history(scope, id);
    send(res, status, approvalPage(viewerOf(who), view, history, deps.clock.now(), notice));
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', deps.origin);
    const path = url.pathname;
    const method = req.method ?? 'GET';

    const next = url.searchParams.get('next');
    if (method === 'GET' && path === '/login') {
      const signedOut = url.searchParams.has('signed-out');
      return send(
        res,
        200,
        loginPage(
          deps.devLogin,
          undefined,
          deps.oidc === undefined ? undefined : signInHref(next ?? '/cases'),
          signedOut ? { kind: 'ok', text: 'You have signed out.' } : undefined,
        ),
      );
    }
    if (method === 'GET' && path === '/login/start') {
      if (deps.oidc === undefined) return redirect(res, '/login');
      return startSignIn(res, deps.oidc, next ?? '/cases');
    }
    if (method === 'GET' && path === OIDC_CALLBACK_PATH) return finishSignIn(req, res, url);
    if (method === 'POST' && path === '/login') {
      // Pasting a token is a development aid, like the name-and-role login.
      if (!deps.devLogin)
        return send(res, 404, messagePage(undefined, 'Not found', 'There is no such page.'));
      checkOrigin(req);
      const form = await readForm(req);
      if (deps.tokens === undefined)
        return send(res, 400, loginPage(deps.devLogin, 'No identity provider keys are configured.'));
      try {
        const op = await deps.tokens.verify(form.get('token') ?? '');
        setSession(res, await deps.sessions.start(op, 'token', undefined, op.exp * 1000));
        deps.logger.info({ operator: op.operator, roles: op.roles }, 'ops console: signed in');
        return redirect(res, '/cases');
      } catch (err) {
        if (!(err instanceof SignInRefused)) throw err;
        return send(res, 401, loginPage(deps.devLogin, err.message));
      }
    }
    if (method === 'POST' && path === '/login/dev') {
      if (!deps.devLogin)
        return send(res, 404, messagePage(undefined, 'Not found', 'There is no such page.'));
      checkOrigin(req);
      const form = await readForm(req);
      const operator = form.get('operator') ?? '';
      const role = form.get('role') ?? '';
      if (!/^[A-Za-z0-9._@-]{1,64}$/.test(operator) || !(CONSOLE_ROLES as readonly string[]).includes(role)) {
        return send(
          res,
          400,
          loginPage(true, 'Give a name ([A-Za-z0-9._@-], up to 64) and one of the roles.'),
        );
      }
      setSession(
        res,
        await deps.sessions.start({ operator, roles: [role as ConsoleRole], tenants: ['*'] }, 'dev'),
      );
      deps.logger.warn({ operator, role }, 'ops console: development login');
      return redirect(res, '/cases');
    }

    const who = await authenticate(req);
    if (who === undefined) {
      // A page asked for without a (live) session: sign in, then come back to exactly this page.
      if (method === 'GET' || method === 'HEAD') {
        const here = `${path}${url.search}`;
        return redirect(
          res,
          deps.oidc === undefined ? `/login?next=${encodeURIComponent(here)}` : signInHref(here),
        );
      }
      checkOrigin(req);
      throw new Refusal(401, 'Refused: sign in first.');
    }

    if (method === 'GET' || method === 'HEAD') {
      requireRole(who, 'view');
      const now = deps.clock.now();
      if (path === '/' || path === '') return redirect(res, '/cases');
      if (path === '/cases' || path === '/dead-letters') {
        const f = listFilters(url.searchParams);
        const { cases, truncated } = await listCases(deps.operations, f, now);
        return send(
          res,
          200,
          path === '/cases'
            ? casesPage(viewerOf(who), f, cases, truncated, now)
            : deadLettersPage(viewerOf(who), f, cases, truncated, now),
        );
      }
      const caseMatch = /^\/cases\/([^/]+)$/.exec(path);
      if (caseMatch !== null) return renderCase(who, decodeURIComponent(caseMatch[1]!), 200, res);
      if (path === '/approvals') return renderApprovals(who, url.searchParams, res);
      const approvalMatch = /^\/approvals\/([^/]+)$/.exec(path);
      if (approvalMatch !== null) return renderApproval(who, decodeURIComponent(approvalMatch[1]!), 200, res);
      if (path === '/audit')
        return send(res, 200, await auditSearch(deps, viewerOf(who), url.searchParams, now));
      if (path === '/chains') {
        const reports: { chain: string; report: VerifyReport }[] = [];
        for (const chain of await deps.chains())
          reports.push({ chain, report: await deps.audit.verify({ chain }) });
        return send(res, 200, chainsPage(viewerOf(who), reports));
      }
      return send(res, 404, messagePage(viewerOf(who), 'Not found', 'There is no such page.'));
    }

    if (method !== 'POST') throw new Refusal(405, 'Method not allowed.');
    checkOrigin(req);
    const form = await readForm(req);
    requireCsrf(who, form);

    if (path === '/logout') {
      // The record goes first: from here on the cookie, wherever copies of it are, is worth nothing.
      const ended = who.bearer ? undefined : await deps.sessions.end(who.session.sid);
      setSession(res, undefined);
      deps.logger.info({ operator: who.session.operator }, 'ops console: signed out');
      const back = `${deps.origin}/login?signed-out`;
      const atProvider =
        who.session.via === 'oidc' && deps.oidc !== undefined
          ? await deps.oidc.endSessionUrl(ended?.idToken, back).catch(() => undefined)
          : undefined;
      return redirect(res, atProvider ?? back);
    }

    const resolveMatch = /^\/cases\/([^/]+)\/(resolve|redrive)$/.exec(path);
    if (resolveMatch !== null) {
      const caseId = decodeURIComponent(resolveMatch[1]!);
      const kind = resolveMatch[2] as 'resolve' | 'redrive';
      requireRole(who, kind);
      const note = (form.get('note') ?? '').trim();
      if (note === '')
        return renderCase(who, caseId, 400, res, { kind: 'error', text: 'A reason is required.' });
      let result: OperationResult;
      if (kind === 'resolve') {
        const outcome = form.get('outcome');
        if (outcome !== 'succeeded' && outcome !== 'failed') {
          return renderCase(who, caseId, 400, res, { kind: 'error', text: 'Choose succeeded or failed.' });
        }
        result = await deps.operations.resolveByHand(caseId, { outcome, by: who.session.operator, note });
      } else {
        const assertion = (form.get('assertion') ?? '').trim();
        result = await deps.operations.redrive(caseId, {
          by: who.session.operator,
          note,
          ...(assertion === '' ? {} : { principalAssertion: assertion }),
        });
      }
      deps.logger.info(
        {
          operator: who.session.operator,
          action: kind,
          caseId,
          ok: result.ok,
          ...(result.ok ? {} : { reason: result.reason }),
        },
        'ops console: case action',
      );
      if (!result.ok) {
        const status = result.reason === 'not-found' ? 404 : 409;
        return renderCase(who, caseId, status, res, {
          kind: 'error',
          text: `Refused (${result.reason}): ${result.detail}`,
        });
      }
      const text =
        kind === 'resolve'
          ? `Resolved: the case is now ${result.case.state}${result.delivery.audited ? '; audit record published' : '; the audit record could not be published yet'}.`
          : `Redriven: the case is now ${result.case.state}${result.resubmitted ? '; the call was re-submitted' : '; another round of status checks'}.`;
      return renderCase(who, caseId, 200, res, { kind: 'ok', text });
    }

    const decideMatch = /^\/approvals\/([^/]+)\/decide$/.exec(path);
    if (decideMatch !== null) {
      const id = decodeURIComponent(decideMatch[1]!);
      const verdict = form.get('verdict');
      if (verdict !== 'approve' && verdict !== 'reject') throw new Refusal(400, 'Choose approve or reject.');
      requireRole(who, verdict);
      const reason = (form.get('reason') ?? '').trim();
      if (reason === '')
        return renderApproval(who, id, 400, res, { kind: 'error', text: 'A reason is required.' });
      const scope = scopeOf(who);
      const result =
        verdict === 'approve'
          ? await deps.approvals.approve(scope, id, who.session.operator, reason)
          : await deps.approvals.reject(scope, id, who.session.operator, reason);
      deps.logger.info(
        { operator: who.session.operator, action: verdict, approval: id, ok: result.ok },
        'ops console: approval decision',
      );
      if (!result.ok && result.reason === 'not-found')
        return send(res, 404, messagePage(viewerOf(who), 'Not found', `There is no approval request ${id}.`));
      return renderApproval(
        who,
        id,
        result.ok ? 200 : 409,
        res,
        result.ok
          ? { kind: 'ok', text: `Done: ${result.detail}.` }
          : { kind: 'error', text: `Refused: ${result.detail}.` },
      );
    }
    throw new Refusal(404, 'There is no such action.');
  };

  return async (req, res) => {
    try {
      await route(req, res);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof Refusal) {
        send(
          res,
          err.status,
          messagePage(undefined, err.status === 401 ? 'Sign in' : 'Refused', err.message),
        );
        return;
      }
      deps.logger.error({ err, path: (req.url ?? '').split('?', 1)[0] }, 'ops console: request failed');
      send(
        res,
        500,
        messagePage(
          undefined,
          'Something went wrong',
          'The request failed; nothing more is known here. See the console’s log.',
        ),
      );
    }
  };
}

/**
 * A case's arguments as the page shows them: through the tool's audit allow-list, like the audit
 * log's (every field "[redacted]" when the tool cannot be resolved). Null when the case has no request.
 */
export function shownArguments(tools: ToolResolver, view: CaseView): Record<string, unknown> | null {
  const request = view.request;
  if (request?.arguments === undefined) return null;
  const tool = resolveCaseTool(tools, view.case, request);
  return redactArguments(request.arguments, tool.ok ? tool.tool.auditFields : undefined);
}

/** The list filters from a query string; unknown values are dropped. */
export function listFilters(q: URLSearchParams): ListFilters {
  const pick = (name: string, allowed?: readonly string[]) => {
    const v = q.get(name)?.trim();
    if (v === undefined || v === '' || (allowed !== undefined && !allowed.includes(v))) return {};
    return { [name]: v.slice(0, 200) };
  };
  return {
    ...pick('state', ['open', 'needs_manual', 'resolved_succeeded', 'resolved_failed']),
    ...pick('reason', ['UNRESOLVED', 'EXHAUSTED', 'POISON']),
    ...pick('tool'),
    ...pick('tenant'),
    ...pick('age', Object.keys(AGE_FILTERS)),
  };
}

const HOUR = 3_600_000;
const AGE_BOUNDS: Readonly<Record<string, (ageMs: number) => boolean>> = {
  lt1h: (a) => a < HOUR,
  lt24h: (a) => a < 24 * HOUR,
  gt1h: (a) => a >= HOUR,
  gt24h: (a) => a >= 24 * HOUR,
  gt7d: (a) => a >= 7 * 24 * HOUR,
};

/**
 * The cases matching `f`, oldest first (the ones waiting longest): state, tool and tenant in the
 * store's query, at most {@link LIST_LIMIT}; reason and age on what it returns.
 */
export async function listCases(
  operations: Operations,
  f: ListFilters,
  nowMs: number,
): Promise<{ readonly cases: ReconciliationCase[]; readonly truncated: boolean }> {
  const filter: CaseFilter = {
    ...(f.state === undefined ? {} : { state: f.state as CaseState }),
    ...(f.tool === undefined ? {} : { tool: f.tool }),
    ...(f.tenant === undefined ? {} : { tenant: f.tenant }),
    limit: LIST_LIMIT,
  };
  const ageOk = f.age === undefined ? () => true : AGE_BOUNDS[f.age]!;
  const read = await operations.listCases(filter);
  return {
    cases: read.filter(
      (c) => (f.reason === undefined || c.reason === f.reason) && ageOk(nowMs - c.createdAtMs),
    ),
    truncated: read.length >= LIST_LIMIT,
  };
}

async function auditSearch(
  deps: ConsoleDeps,
  viewer: Viewer,
  q: URLSearchParams,
  nowMs: number,
): Promise<Html> {
  const get = (name: string) => {
    const v = q.get(name)?.trim();
    return v === undefined || v === '' ? undefined : v.slice(0, 500);
  };
  const resource = get('resource');
  const tool = get('tool');
  const tenant = get('tenant');
  const principal = get('principal');
  const sourceText = get('source');
  const source = AUDIT_SOURCES.find((s): s is AuditSource => s === sourceText);
  const shown = {
    ...(resource === undefined ? {} : { resource }),
    ...(tool === undefined ? {} : { tool }),
    ...(tenant === undefined ? {} : { tenant }),
    ...(principal === undefined ? {} : { principal }),
    ...(source === undefined ? {} : { source }),
  };
  const target: WhoDidTarget | undefined =
    resource === undefined ? undefined : tool === undefined ? resource : { tool, resource };
  const who =
    target === undefined
      ? undefined
      : await deps.audit.whoDid(target, { ...(tenant === undefined ? {} : { tenant }), limit: 500 });
  const records =
    principal === undefined && source === undefined && (resource !== undefined || tool === undefined)
      ? undefined
      : await deps.audit.query({
          ...(principal === undefined ? {} : { principalId: principal }),
          ...(source === undefined ? {} : { source }),
          ...(tool === undefined ? {} : { tool }),
          ...(tenant === undefined ? {} : { tenant }),
          order: 'desc',
          limit: 200,
        });
  return auditPage(viewer, shown, who, records, nowMs);
}

function cookies(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, 'The form is too large.');
    chunks.push(chunk);
  }
  if (size === 0) return new URLSearchParams();
  if (type !== 'application/x-www-form-urlencoded')
    throw new Refusal(415, 'Send the form as application/x-www-form-urlencoded.');
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
