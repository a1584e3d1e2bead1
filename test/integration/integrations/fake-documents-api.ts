import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface UserToken {
  readonly user: string;
  readonly tenant: string;
  readonly expiresAtMs: number;
}

interface Document {
  readonly tenant: string;
  readonly title: string;
  readonly body: string;
  readonly readers: ReadonlySet<string>;
}

/** What the documents API saw: whose authority each request carried, and what it answered. */
export interface SeenDocumentRequest {
  readonly path: string;
  /** The user the bearer token belonged to, or undefined for a missing, unknown or expired token. */
  readonly user: string | undefined;
  readonly status: number;
}

/**
 * A documents API on loopback that enforces its OWN per-user access control from the bearer token,
 * the way a real downstream does: tokens are opaque and issued by its sign-in
 * (`signIn`), each document lists the users who may read it. It knows nothing of toolgate.
 * - `GET /documents/:id` → 200 `{id,title,body}`; 401 without a valid token; 404 for a missing
 *   document or one of another tenant (not revealing it exists); 403 when this user may not read it.
 */
export interface FakeDocumentsApi {
  readonly url: string;
  readonly seen: SeenDocumentRequest[];
  /** The user's own sign-in: an opaque access token only this API can check. */
  signIn(user: string, tenant: string, ttlMs?: number): string;
  addDocument(id: string, doc: { tenant: string; title: string; body: string; readers: string[] }): void;
  close(): Promise<void>;
}

export async function startFakeDocumentsApi(): Promise<FakeDocumentsApi> {
  const tokens = new Map<string, UserToken>();
  const documents = new Map<string, Document>();
  const seen: SeenDocumentRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://docs.invalid');
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer === undefined ? undefined : tokens.get(bearer);
    const caller = token !== undefined && token.expiresAtMs > Date.now() ? token : undefined;
    const answer = (status: number, body: unknown): void => {
      seen.push({ path: url.pathname, user: caller?.user, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const match = /^\/documents\/([^/]+)$/.exec(url.pathname);
    if (req.method !== 'GET' || match === null) return answer(404, { error: 'not_found' });
    if (caller === undefined) return answer(401, { error: 'invalid_token' });
    const id = decodeURIComponent(match[1]!);
    const doc = documents.get(id);
    if (doc === undefined || doc.tenant !== caller.tenant) return answer(404, { error: 'not_found' });
    if (!doc.readers.has(caller.user)) return answer(403, { error: 'forbidden' });
    answer(200, { id, title: doc.title, body: doc.body });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    signIn(user, tenant, ttlMs = 3_600_000) {
      const token = `uat_${randomBytes(24).toString('base64url')}`;
      tokens.set(token, { user, tenant, expiresAtMs: Date.now() + ttlMs });
      return token;
    },
    addDocument(id, doc) {
      documents.set(id, { ...doc, readers: new Set(doc.readers) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
