import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditRecordEvent } from '../../libs/events/contracts.js';
import { inTenantScope, type TenantScope } from '../../libs/core/tenant-scope.js';
import { deliver, type DeliveryDeps } from '../../libs/reconcile/deliver.js';
import {
  AUDIT_SOURCES,
  type AuditSource,
  type AuditStore,
  type VerifyReport,
  type WhoDidTarget,
} from '../../libs/ports/audit-store.js';
import type {
  CaseCountFilter,
  CaseFilter,
  CaseReason,
  CaseState,
  CaseStore,
  ReconciliationCase,
} from '../../libs/ports/case-store.js';
import { CASE_STATES } from '../../libs/reconcile/case-query.js';
import type { Clock } from '../../libs/core/clock.js';
import type { Logger } from '../../libs/ports/logger.js';
import { redactArguments } from '../../libs/pipeline/build-audit-record.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { CaseView, OperationResult, Operations } from '../../libs/reconcile/operation-types.js';
import { resolveCaseTool } from '../../libs/reconcile/resolve-tool.js';
import { standing, type ApprovalsListing, type ApprovalsQueue } from './approvals.js';
import {
  APPROVAL_STATES,
  type ApprovalRequest,
  type ApprovalState,
} from '../../libs/ports/approval-store.js';
import type { Html } from './html.js';
import {
  AGE_FILTERS,
  MAX_PAGE,
  PAGE_SIZE,
  approvalsPage,
  caseDoneNotice,
  doneNotice,
  rawPayloadPage,
  type DoneKey,
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
import type { ConsoleMetrics } from './console-metrics.js';
import { operatorAuditEvent } from './operator-audit.js';
import { scopeOf, tenantsFilter } from './scope.js';
import type { SessionStore } from '../../libs/ports/session-store.js';
import { OIDC_CALLBACK_PATH } from './config.js';
import { PENDING_SIGN_IN_TTL_MS, parsePendingSignIn, returnPathOr, type OidcSignIn } from './oidc.js';
import { sessionCookieName, type OperatorSession, type OperatorSessions } from './session.js';
import { SignInRefused, type OperatorTokens } from './sign-in.js';

/** What the console's pages and actions run on. */
export interface ConsoleDeps {
  /** The reconciler's operations (libs/reconcile/operations.ts), as the CLI's dlq commands use them. */
  readonly operations: Operations;
  /** The case store's per-state counts, for the lists' state tabs. */
  readonly cases: Pick<CaseStore, 'countByState'>;
  /**
   * A link to a trace viewer, `{traceId}` replaced by the URL-encoded trace id (e.g.
   * `https://tempo.example/trace/{traceId}`); undefined: trace ids are shown as text.
   */
  readonly traceUrl?: string | undefined;
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
  /**
   * Where the audit record of a refused out-of-scope attempt goes: the reconciler's delivery path
   * (the audit topic, retried), as resolutions and preview decisions go.
   */
  readonly delivery: DeliveryDeps;
  readonly metrics: ConsoleMetrics;
}

/** How long a shed request is asked to wait before trying again (seconds, the Retry-After value). */
export const OVERLOAD_RETRY_AFTER_SEC = 5;

/**
 * The chain an out-of-scope attempt on a case without a tenant (an undecodable poison letter) is
 * audited in. Such a case is shown only to operators of every tenant, and so is this chain: no
 * tenant list contains `*` (it is the claim for all).
 */
export const UNATTRIBUTED_CHAIN = '*';

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
interface Who {
  readonly session: OperatorSession;
  /** A bearer token on the request itself: no cookie, so nothing for a forged request to ride on. */
  readonly bearer: boolean;
  /** The time zone the operator chose to read times in (the `tg_tz` cookie); undefined: UTC. */
  readonly timeZone: string | undefined;
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
    tenants: who.session.tenants,
    via: who.session.via,
    csrf: deps.sessions.csrfToken(who.session),
    timeZone: who.timeZone,
    traceUrl: deps.traceUrl,
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
      return {
        session: deps.sessions.transient(op, 'token', op.exp),
        bearer: true,
        timeZone: timeZoneOf(req),
      };
    }
    const session = await deps.sessions.resume(cookies(req)[cookieName]);
    return session === undefined ? undefined : { session, bearer: false, timeZone: timeZoneOf(req) };
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

  /**
   * Refuses, in the audit log and the log, an operator's attempt on a case or an approval request
   * outside their tenants. The record goes to its tenant's chain (that tenant's auditors see who tried), under the
   * operator's principal with source `operator`, outcome UNAUTHORIZED. Not awaited: the answer is the
   * same 404 as for an unknown id and comes as fast; a record that cannot be delivered is logged.
   */
  const refuseOutOfScope = (who: Who, action: ConsoleAction, target: ScopedTarget): void => {
    const actor = `operator:${who.session.operator}`;
    deps.logger.warn(
      { operator: who.session.operator, action, target: target.what, tenant: target.tenant },
      'ops console: outside the operator’s tenants; answered as not found',
    );
    const event = outOfScopeAuditEvent(target, actor, action, who.session.tenants, deps.clock.now());
    void deliver(deps.delivery, { audit: event }, AbortSignal.timeout(30_000))
      .then((report) => {
        if (!report.audited)
          deps.logger.error({ target: target.what, actor }, 'ops console: out-of-scope attempt not audited');
      })
      .catch((err: unknown) =>
        deps.logger.error(
          { err, target: target.what, actor },
          'ops console: out-of-scope attempt not audited',
        ),
      );
  };

  /** The case if it exists and is in the operator's scope; undefined (audited) when outside it. */
  const scopedCase = async (who: Who, caseId: string, action: ConsoleAction) => {
    const view = await deps.operations.showCase(caseId);
    if (view === undefined) return undefined;
    if (!caseInScope(scopeOf(who.session), view.case)) {
      refuseOutOfScope(who, action, caseTarget(view.case));
      return undefined;
    }
    return view;
  };

  /** The approval request if it exists and is in the operator's scope; undefined (audited) when outside it. */
  const scopedApproval = async (who: Who, id: string, action: ConsoleAction) => {
    const scope = scopeOf(who.session);
    const view = await deps.approvals.find(scope, id);
    if (view !== undefined) return view;
    const outside = await deps.approvals.outsideScope(scope, id);
    if (outside !== undefined) refuseOutOfScope(who, action, approvalTarget(outside));
    return undefined;
  };

  const notFoundApproval = (who: Who, id: string, res: ServerResponse) =>
    send(res, 404, messagePage(viewerOf(who), 'Not found', `There is no approval request ${id}.`));

  const notFoundCase = (who: Who, caseId: string, res: ServerResponse) =>
    send(res, 404, messagePage(viewerOf(who), 'Not found', `There is no case ${caseId}.`));

  const renderCase = async (
    who: Who,
    caseId: string,
    status: number,
    res: ServerResponse,
    /** A notice, or the `done` key of the redirect after an action (its text says the case's state now). */
    notice?: Notice | string | null,
  ) => {
    const view = await scopedCase(who, caseId, 'view');
    if (view === undefined) return notFoundCase(who, caseId, res);
    const tenants = tenantsFilter(scopeOf(who.session));
    const trail =
      view.case.callId === null
        ? []
        : await deps.audit.query({
            callId: view.case.callId,
            ...(tenants === undefined ? {} : { tenants }),
            limit: 1000,
          });
    send(
      res,
      status,
      casePage(
        viewerOf(who),
        view,
        shownArguments(deps.tools, view),
        trail,
        deps.clock.now(),
        typeof notice === 'string' ? caseDoneNotice(notice, view.case.state) : (notice ?? undefined),
      ),
    );
  };

  /**
   * One resolve or redrive of one case by the operator: role already checked; the case must be in
   * their scope (else not found, audited), a reason is required, then the reconciler's operation.
   * Shared by the case page's forms and the bulk action, so both act and audit alike.
   */
  const actOnCase = async (
    who: Who,
    caseId: string,
    a: {
      kind: 'resolve' | 'redrive';
      note: string;
      outcome: 'succeeded' | 'failed' | undefined;
      assertion: string;
    },
  ): Promise<{ ok: true; done: DoneKey } | { ok: false; status: number; text: string }> => {
    if ((await scopedCase(who, caseId, a.kind)) === undefined)
      return { ok: false, status: 404, text: `There is no case ${caseId}.` };
    const note = a.note.trim();
    if (note === '') return { ok: false, status: 400, text: 'A reason is required.' };
    let result: OperationResult;
    if (a.kind === 'resolve') {
      if (a.outcome === undefined) return { ok: false, status: 400, text: 'Choose succeeded or failed.' };
      result = await deps.operations.resolveByHand(caseId, {
        outcome: a.outcome,
        by: who.session.operator,
        note,
      });
    } else {
      const assertion = a.assertion.trim();
      result = await deps.operations.redrive(caseId, {
        by: who.session.operator,
        note,
        ...(assertion === '' ? {} : { principalAssertion: assertion }),
      });
    }
    deps.logger.info(
      {
        operator: who.session.operator,
        action: a.kind,
        caseId,
        ok: result.ok,
        ...(result.ok ? {} : { reason: result.reason }),
      },
      'ops console: case action',
    );
    if (!result.ok)
      return {
        ok: false,
        status: result.reason === 'not-found' ? 404 : 409,
        text: `Refused (${result.reason}): ${result.detail}`,
      };
    const done: DoneKey =
      a.kind === 'resolve'
        ? result.delivery.audited
          ? 'resolved'
          : 'resolved-unaudited'
        : result.resubmitted
          ? 'redriven-resubmitted'
          : 'redriven-checks';
    return { ok: true, done };
  };

  const renderApprovals = async (who: Who, q: URLSearchParams, res: ServerResponse) => {
    const state = q.get('state') ?? 'pending';
    if (!(APPROVAL_STATES as readonly string[]).includes(state)) throw new Refusal(400, 'Unknown state.');
    const after = q.get('after') ?? undefined;
    let listing: ApprovalsListing;
    try {
      listing = await deps.approvals.list(scopeOf(who.session), {
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
    /** A notice, or `decided`: the redirect after a decision (the text says where the request stands now). */
    notice?: Notice | 'decided',
  ) => {
    const scope = scopeOf(who.session);
    const view = await scopedApproval(who, id, 'view');
    if (view === undefined) return notFoundApproval(who, id, res);
    const history = await deps.approvals.history(scope, id);
    const shown =
      notice === 'decided' ? { kind: 'ok' as const, text: `Done: ${standing(view.request)}.` } : notice;
    send(res, status, approvalPage(viewerOf(who), view, history, deps.clock.now(), shown));
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Bad input stops here, for every route: a malformed %-encoding or a NUL anywhere in the path or
    // the query is a 400 before anything reads it (forms get the same check in readForm).
    const url = requestTarget(req.url ?? '/', deps.origin);
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
    if (method === 'GET' && path === OIDC_CALLBACK_PATH)
      return finishSignIn(req, res, new URL(req.url ?? '/', deps.origin));
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
        deps.logger.info(
          { operator: op.operator, roles: op.roles, tenants: op.tenants },
          'ops console: signed in',
        );
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
      const tenants = (form.get('tenants') ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '');
      if (
        !/^[A-Za-z0-9._@-]{1,64}$/.test(operator) ||
        !(CONSOLE_ROLES as readonly string[]).includes(role) ||
        tenants.length === 0 ||
        tenants.some((t) => !/^[A-Za-z0-9._:@*-]{1,256}$/.test(t))
      ) {
        return send(
          res,
          400,
          loginPage(
            true,
            'Give a name ([A-Za-z0-9._@-], up to 64), one of the roles, and the tenants (comma-separated, * for all).',
          ),
        );
      }
      setSession(res, await deps.sessions.start({ operator, roles: [role as ConsoleRole], tenants }, 'dev'));
      deps.logger.warn({ operator, role, tenants }, 'ops console: development login');
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
        const scope = scopeOf(who.session);
        const [{ cases, hasMore }, counts] = await Promise.all([
          listCases(deps.operations, f, now, scope),
          deps.cases.countByState(caseCountFilter(f, now, scope)),
        ]);
        const list = { filters: f, cases, hasMore, counts };
        return send(
          res,
          200,
          path === '/cases'
            ? casesPage(viewerOf(who), list, now, doneNotice(url.searchParams))
            : deadLettersPage(viewerOf(who), list, now),
        );
      }
      const caseMatch = /^\/cases\/([^/]+)$/.exec(path);
      if (caseMatch !== null)
        return renderCase(who, decodeURIComponent(caseMatch[1]!), 200, res, url.searchParams.get('done'));
      const rawMatch = /^\/cases\/([^/]+)\/raw$/.exec(path);
      if (rawMatch !== null) {
        const caseId = decodeURIComponent(rawMatch[1]!);
        const view = await scopedCase(who, caseId, 'view');
        if (view === undefined) return notFoundCase(who, caseId, res);
        return send(res, 200, rawPayloadPage(viewerOf(who), view.case));
      }
      if (path === '/approvals') return renderApprovals(who, url.searchParams, res);
      const approvalMatch = /^\/approvals\/([^/]+)$/.exec(path);
      if (approvalMatch !== null) {
        const decided = url.searchParams.get('done') === 'decided' ? 'decided' : undefined;
        return renderApproval(who, decodeURIComponent(approvalMatch[1]!), 200, res, decided);
      }
      if (path === '/audit')
        return send(
          res,
          200,
          await auditSearch(deps, viewerOf(who), url.searchParams, now, scopeOf(who.session)),
        );
      if (path === '/chains') {
        const scope = scopeOf(who.session);
        const reports: { chain: string; report: VerifyReport }[] = [];
        for (const chain of await deps.chains()) {
          if (inTenantScope(scope, chain))
            reports.push({ chain, report: await deps.audit.verify({ chain }) });
        }
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

    if (path === '/prefs') {
      const tz = (form.get('tz') ?? '').trim();
      if (tz !== '' && !isTimeZone(tz))
        throw new Refusal(
          400,
          'Bad request: give an IANA time zone such as Europe/Berlin, or nothing for UTC.',
        );
      res.setHeader(
        'set-cookie',
        `${TZ_COOKIE}=${encodeURIComponent(tz)}; Path=/; SameSite=Strict; ${tz === '' ? 'Max-Age=0' : 'Max-Age=31536000'}${secure ? '; Secure' : ''}`,
      );
      return redirect(res, safeReturn(form.get('back')));
    }

    const actionMatch = /^\/cases\/([^/]+)\/(resolve|redrive)$/.exec(path);
    if (actionMatch !== null) {
      const caseId = decodeURIComponent(actionMatch[1]!);
      const kind = actionMatch[2] as 'resolve' | 'redrive';
      requireRole(who, kind);
      const outcome = form.get('outcome');
      const done = await actOnCase(who, caseId, {
        kind,
        note: form.get('note') ?? '',
        outcome: outcome === 'succeeded' || outcome === 'failed' ? outcome : undefined,
        assertion: form.get('assertion') ?? '',
      });
      if (!done.ok) {
        if (done.status === 404) return notFoundCase(who, caseId, res);
        return renderCase(who, caseId, done.status, res, { kind: 'error', text: done.text });
      }
      // Post/redirect/get: a reload of the page shown next asks for the case again, never re-posts.
      return redirect(res, `/cases/${encodeURIComponent(caseId)}?done=${done.done}`);
    }

    if (path === '/cases/bulk') {
      const action = form.get('action');
      const kind = action === 'redrive' ? 'redrive' : 'resolve';
      const outcome =
        action === 'resolve-succeeded' ? 'succeeded' : action === 'resolve-failed' ? 'failed' : undefined;
      if (action !== 'redrive' && outcome === undefined)
        throw new Refusal(400, 'Bad request: choose resolve as succeeded, resolve as failed, or redrive.');
      requireRole(who, kind);
      const ids = [...new Set(form.getAll('case'))];
      if (ids.length === 0 || ids.length > PAGE_SIZE)
        throw new Refusal(400, `Bad request: select between 1 and ${PAGE_SIZE} cases.`);
      const note = form.get('note') ?? '';
      let ok = 0;
      let refused = 0;
      // One after another: each case is its own operation, scoped, audited and logged on its own.
      for (const caseId of ids) {
        const done = await actOnCase(who, caseId, { kind, note, outcome, assertion: '' });
        if (done.ok) ok += 1;
        else refused += 1;
      }
      return redirect(res, `/cases?done=bulk&action=${kind}&ok=${ok}&refused=${refused}`);
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
      if ((await scopedApproval(who, id, verdict)) === undefined) return notFoundApproval(who, id, res);
      const scope = scopeOf(who.session);
      const result =
        verdict === 'approve'
          ? await deps.approvals.approve(scope, id, who.session.operator, reason)
          : await deps.approvals.reject(scope, id, who.session.operator, reason);
      deps.logger.info(
        { operator: who.session.operator, action: verdict, approval: id, ok: result.ok },
        'ops console: approval decision',
      );
      if (!result.ok && result.reason === 'not-found') return notFoundApproval(who, id, res);
      // Post/redirect/get: the page shown next says where the request stands now; a reload re-posts nothing.
      if (result.ok) return redirect(res, `/approvals/${encodeURIComponent(id)}?done=decided`);
      return renderApproval(who, id, 409, res, { kind: 'error', text: `Refused: ${result.detail}.` });
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
      if (isPoolWaitTimeout(err)) {
        deps.metrics.observeOverloaded();
        deps.logger.warn(
          { path: (req.url ?? '').split('?', 1)[0] },
          'ops console: no database connection free in time; answered 503',
        );
        res.setHeader('retry-after', String(OVERLOAD_RETRY_AFTER_SEC));
        send(
          res,
          503,
          messagePage(
            undefined,
            'Busy',
            `The console is busy: no database connection was free in time. Try again in ${OVERLOAD_RETRY_AFTER_SEC} seconds.`,
          ),
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
  const page = Number(q.get('page') ?? '1');
  return {
    ...pick('state', CASE_STATES),
    ...pick('reason', ['UNRESOLVED', 'EXHAUSTED', 'POISON']),
    ...pick('tool'),
    ...pick('tenant'),
    ...pick('age', Object.keys(AGE_FILTERS)),
    ...pick('q'),
    ...pick('sort', ['oldest', 'newest']),
    page: Number.isInteger(page) && page >= 1 && page <= MAX_PAGE ? page : 1,
  };
}

const HOUR = 3_600_000;
/** Each age filter as creation-time bounds at `nowMs` (an age of at least X: created at or before now − X). */
const AGE_BOUNDS: Readonly<
  Record<string, (nowMs: number) => { createdFromMs?: number; createdToMs?: number }>
> = {
  lt1h: (now) => ({ createdFromMs: now - HOUR + 1 }),
  lt24h: (now) => ({ createdFromMs: now - 24 * HOUR + 1 }),
  gt1h: (now) => ({ createdToMs: now - HOUR + 1 }),
  gt24h: (now) => ({ createdToMs: now - 24 * HOUR + 1 }),
  gt7d: (now) => ({ createdToMs: now - 7 * 24 * HOUR + 1 }),
};

/** `f` within `scope` as the case store's filter, without state, order or paging (counts take this). */
export function caseCountFilter(f: ListFilters, nowMs: number, scope: TenantScope): CaseCountFilter {
  const tenants = tenantsFilter(scope);
  return {
    ...(f.tool === undefined ? {} : { tool: f.tool }),
    ...(f.tenant === undefined ? {} : { tenant: f.tenant }),
    ...(tenants === undefined ? {} : { tenants }),
    ...(f.reason === undefined ? {} : { reason: f.reason as CaseReason }),
    ...(f.q === undefined ? {} : { search: f.q }),
    ...(f.age === undefined ? {} : AGE_BOUNDS[f.age]!(nowMs)),
  };
}

/**
 * One page ({@link PAGE_SIZE}) of the cases matching `f` within `scope`, oldest first unless
 * `sort=newest`: every filter, the scope's tenants, the order and the page are in the store's
 * query; `hasMore` says whether another page follows.
 */
export async function listCases(
  operations: Operations,
  f: ListFilters,
  nowMs: number,
  scope: TenantScope,
): Promise<{ readonly cases: ReconciliationCase[]; readonly hasMore: boolean }> {
  const filter: CaseFilter = {
    ...caseCountFilter(f, nowMs, scope),
    ...(f.state === undefined ? {} : { state: f.state as CaseState }),
    order: f.sort === 'newest' ? 'desc' : 'asc',
    offset: (f.page - 1) * PAGE_SIZE,
    limit: PAGE_SIZE + 1,
  };
  const read = await operations.listCases(filter);
  return { cases: read.slice(0, PAGE_SIZE), hasMore: read.length > PAGE_SIZE };
}

async function auditSearch(
  deps: ConsoleDeps,
  viewer: Viewer,
  q: URLSearchParams,
  nowMs: number,
  scope: TenantScope,
): Promise<Html> {
  const tenants = tenantsFilter(scope);
  const inScope = tenants === undefined ? {} : { tenants };
  const get = (name: string) => {
    const v = q.get(name)?.trim();
    return v === undefined || v === '' ? undefined : v.slice(0, 500);
  };
  const pageNumber = Number(q.get('page') ?? '1');
  const page = Number.isInteger(pageNumber) && pageNumber >= 1 && pageNumber <= MAX_PAGE ? pageNumber : 1;
  const sort = q.get('sort') === 'oldest' ? 'oldest' : 'newest';
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
      : await deps.audit.whoDid(target, {
          ...(tenant === undefined ? {} : { tenant }),
          ...inScope,
          limit: 500,
        });
  const records =
    principal === undefined && source === undefined && (resource !== undefined || tool === undefined)
      ? undefined
      : await deps.audit.query({
          ...(principal === undefined ? {} : { principalId: principal }),
          ...(source === undefined ? {} : { source }),
          ...(tool === undefined ? {} : { tool }),
          ...(tenant === undefined ? {} : { tenant }),
          ...inScope,
          order: sort === 'oldest' ? 'asc' : 'desc',
          offset: (page - 1) * PAGE_SIZE,
          limit: PAGE_SIZE + 1,
        });
  return auditPage(
    viewer,
    shown,
    who,
    records === undefined
      ? undefined
      : { records: records.slice(0, PAGE_SIZE), hasMore: records.length > PAGE_SIZE, page, sort },
    nowMs,
  );
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
  const body = Buffer.concat(chunks);
  if (!isWellFormedUtf8(body)) throw new Refusal(400, 'The form is not UTF-8 text.');
  return strictParams(body.toString('utf8'), 'form');
}

function isWellFormedUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The request's path and query (`search`: as sent, `?…` or empty), decoded strictly: a malformed %-encoding (`%E0%A4%A`, a lone `%`,
 * bytes that are not UTF-8) or a NUL character in any path segment, query name or value is a
 * {@link Refusal} 400 saying which part is wrong. Every route reads the path and query from here,
 * so no store ever sees text PostgreSQL cannot hold and no decoder throws later.
 */
export function requestTarget(
  target: string,
  origin: string,
): { pathname: string; search: string; searchParams: URLSearchParams } {
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? '' : target.slice(q + 1).split('#', 1)[0]!;
  let pathname: string;
  try {
    pathname = new URL(rawPath, origin).pathname;
  } catch {
    throw new Refusal(400, 'Bad request: the address is malformed.');
  }
  for (const segment of pathname.split('/')) strictDecode(segment, 'address');
  const searchParams = strictParams(rawQuery, 'query');
  return { pathname, search: rawQuery === '' ? '' : `?${rawQuery}`, searchParams };
}

/** `text` (`a=1&b=2`, `+` for space) as parameters, decoded strictly (see {@link requestTarget}). */
function strictParams(text: string, where: 'query' | 'form'): URLSearchParams {
  const params = new URLSearchParams();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = strictDecode((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '), where);
    const value = strictDecode(eq < 0 ? '' : pair.slice(eq + 1).replace(/\+/g, ' '), where);
    params.append(name, value);
  }
  return params;
}

function strictDecode(text: string, where: 'address' | 'query' | 'form'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    throw new Refusal(
      400,
      `Bad request: the ${where} holds a malformed %-encoding (each % must start two hex digits of UTF-8).`,
    );
  }
  if (decoded.includes('\u0000'))
    throw new Refusal(400, `Bad request: the ${where} holds a NUL character, which no field may contain.`);
  return decoded;
}

/** Whether `c` is in `scope`: a case without a tenant only for a scope of every tenant. */
function caseInScope(scope: TenantScope, c: ReconciliationCase): boolean {
  return scope.all || (c.tenant !== null && inTenantScope(scope, c.tenant));
}

/** What an operator tried to reach outside their tenants: a case or an approval request. */
export interface ScopedTarget {
  /** How the refusal names it, e.g. `case C-1` or `approval request 9f…`. */
  readonly what: string;
  /** Its tenant; null for a case that has none (an undecodable poison letter). */
  readonly tenant: string | null;
  readonly callId: string;
  readonly tool: string;
  readonly traceId: string;
  readonly resourceKey: string | null;
}

/** A case as an out-of-scope target. Pure. */
export function caseTarget(c: ReconciliationCase): ScopedTarget {
  return {
    what: `case ${c.caseId}`,
    tenant: c.tenant,
    callId: c.callId ?? `case:${c.caseId}`,
    tool: c.tool ?? 'unknown',
    traceId: c.traceId ?? '',
    resourceKey: c.resourceKey,
  };
}

/** An approval request as an out-of-scope target (in the chain of the call that asked). Pure. */
export function approvalTarget(r: ApprovalRequest): ScopedTarget {
  return {
    what: `approval request ${r.id}`,
    tenant: r.tenant,
    callId: `approval:${r.id}`,
    tool: r.tool,
    traceId: r.origin?.traceId ?? '',
    resourceKey: r.origin?.resourceKey ?? null,
  };
}

/**
 * The audit record of an operator's refused attempt on a case or approval request outside their
 * tenants: in the target's tenant's chain ({@link UNATTRIBUTED_CHAIN} for a case without one), with
 * its call id, tool, trace and resource, the operator as principal, outcome UNAUTHORIZED, and the
 * authorize decision naming the action, the target and the operator's tenants. Nothing of the
 * target's arguments is in it. Pure but for the record id, which is random per attempt.
 */
export function outOfScopeAuditEvent(
  target: ScopedTarget,
  actor: string,
  action: ConsoleAction,
  tenants: readonly string[],
  nowMs: number,
): AuditRecordEvent {
  return operatorAuditEvent({
    recordId: `ops-console:out-of-scope:${randomUUID()}`,
    call: {
      callId: target.callId,
      tool: target.tool,
      toolVersion: null,
      tenant: target.tenant ?? UNATTRIBUTED_CHAIN,
      taskId: '',
      step: 0,
      index: 0,
      traceId: target.traceId,
      idempotencyKey: null,
      resourceKey: target.resourceKey,
    },
    actor,
    argumentsJson: '{}',
    decision: {
      stage: 'authorize',
      decision: 'refuse',
      reason: `ops console: ${action} of ${target.what} refused to ${actor}: its tenant is outside theirs (${tenants.join(', ') || 'none'})`,
      outcome: 'UNAUTHORIZED',
      errorCode: 'UNAUTHORIZED',
    },
    nowMs,
  });
}

/**
 * Whether `err` (or an error it wraps) is pg's "no connection in time": the pool had none free
 * within `connectionTimeoutMillis` (pg-pool), or a new connection did not open within it (pg).
 * Such a request is shed with 503 and Retry-After: the database is saturated, not the request wrong.
 */
export function isPoolWaitTimeout(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (
      e.message === 'timeout exceeded when trying to connect' ||
      e.message === 'Connection terminated due to connection timeout'
    )
      return true;
  }
  return false;
}

/** The cookie that keeps an operator's chosen time zone (a display preference, not a secret). */
export const TZ_COOKIE = 'tg_tz';

/** Whether `tz` is an IANA time zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  if (tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The request's chosen time zone, when its cookie names a known one. */
function timeZoneOf(req: IncomingMessage): string | undefined {
  const value = cookies(req)[TZ_COOKIE];
  if (value === undefined) return undefined;
  let tz: string;
  try {
    tz = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  return isTimeZone(tz) ? tz : undefined;
}

/** Where to go back after a preference change: a path of this console, else the case list. */
function safeReturn(back: string | null): string {
  return back !== null && /^\/(?![/\\])[^\s]*$/.test(back) ? back : '/cases';
}
