import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { leaveUnresolved, deadLetteredRefund } from '../../helpers/dead-lettered-refund.js';
import { uniqueName } from '../../helpers/names.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { ConsoleStack } from './console-stack.js';

/**
 * A page on another site than the console's (127.0.0.2, where the console is on 127.0.0.1: another
 * host, so another site for the browser), as a pager, chat or a hostile page would serve it. `html`
 * is its body; the server answers every path with it.
 */
export async function otherSite(html: string): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><body>${html}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.2:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const ARGS = { order_id: 'O-5512', amount: 12.5, reason: 'damaged' };

/** A needs_manual case of a dead-lettered issue_refund whose outcome is unknown (UNRESOLVED in Redis). */
export async function manualCase(stack: ConsoleStack): Promise<ReconciliationCase> {
  const idempotencyKey = uniqueName('idem');
  const { case: c } = await stack.cases.openFromDeadLetter(
    deadLetteredRefund({
      callId: uniqueName('call'),
      providerCallId: uniqueName('prov'),
      idempotencyKey,
      deadLetterId: uniqueName('dl'),
      replyTopic: stack.topics.results,
      arguments: ARGS,
      nowMs: Date.now(),
      lastKnownStateJson: JSON.stringify({ toolVersion: '1.0.0' }),
    }),
  );
  await leaveUnresolved(stack.idempotency, idempotencyKey, ARGS, Date.now(), 3_600_000);
  const moved = await stack.cases.transition(
    c.caseId,
    { to: 'needs_manual', by: 'status-check', note: 'status checks exhausted: only a person can tell' },
    { state: 'open', version: c.version },
  );
  if (!moved.ok) throw new Error('could not escalate the case');
  return moved.case;
}
