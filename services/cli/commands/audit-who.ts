import type { WhoDidTarget } from '../../../libs/ports/audit-store.js';
import { whoDidTable } from '../audit-format.js';
import { EXIT, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { limitOption, listLimit, timeWindow, timeWindowOptions } from '../listing.js';
import { optional } from '../optional.js';

/** `audit who`: every attempt on one resource, split into who did it and who tried. */
export const auditWhoCommand: CommandSpec = {
  path: ['audit', 'who'],
  summary: 'Who acted on a resource, and who tried ("who refunded O-5512?").',
  details: [
    'One query over the audit log. DID lists the attempts whose tool succeeded (the principal caused the effect); TRIED lists every other attempt: refused before the tool (with the refusing stage and reason), failed, unresolved, or answered as a duplicate. Both are oldest first.',
    "With --tool, <resource> is the resource's own id (O-5512); without it, give the full resource key (t1:order:O-5512).",
  ],
  positionals: [
    {
      name: 'resource',
      description: "The resource's id with --tool (O-5512), or its full key (t1:order:O-5512).",
    },
  ],
  options: {
    tool: {
      type: 'string',
      valueName: 'name',
      description: 'The tool that acts on the resource, e.g. issue_refund.',
    },
    tenant: { type: 'string', valueName: 'id', description: 'Only this tenant.' },
    ...timeWindowOptions('Attempts'),
    limit: limitOption('attempts over both lists'),
  },
  needs: ['postgres'],
  examples: ['toolgate audit who O-5512 --tool issue_refund', 'toolgate audit who t1:order:O-5512 --json'],
  async run({ args, out, resources }) {
    const resource = args.positional(0);
    const tool = args.string('tool');
    if (resource.trim() === '') throw new UsageError('<resource> must not be empty.', args.command);
    if (tool === undefined && !resource.includes(':')) {
      throw new UsageError(
        `'${resource}' is not a full resource key: name the tool (--tool issue_refund) or give the key (t1:order:${resource}).`,
        args.command,
      );
    }
    const limit = listLimit(args);
    const { fromMs, toMs } = timeWindow(args);
    const target: WhoDidTarget = tool === undefined ? resource : { tool, resource };
    const store = await resources.auditStore();
    const answer = await store.whoDid(target, {
      ...optional('tenant', args.string('tenant')),
      ...optional('fromMs', fromMs),
      ...optional('toMs', toMs),
      limit,
    });
    const total = answer.did.length + answer.tried.length;
    out.json({
      resource,
      tool: tool ?? null,
      limit,
      truncated: total === limit,
      did: answer.did,
      tried: answer.tried,
    });
    const subject = tool === undefined ? resource : `${tool} on ${resource}`;
    if (total === 0) {
      out.text(`No audit records for ${subject}.`);
      const key = tool === undefined ? undefined : /^([^:]+):[^:]+:(.+)$/.exec(resource);
      if (key) {
        // A full key given with --tool is looked up as an id, which it never is: say what was meant.
        out.note(
          `'${resource}' looks like a full resource key; with --tool, <resource> is the resource's own id: ` +
            `'toolgate audit who ${key[2]} --tool ${tool} --tenant ${key[1]}', or the key without --tool.`,
        );
      }
      return EXIT.ok;
    }
    out.text(`DID (${answer.did.length}): the tool succeeded for ${subject}`);
    out.text(answer.did.length === 0 ? '  nobody\n' : whoDidTable(answer.did));
    out.text(`TRIED (${answer.tried.length}): refused, failed, unresolved or duplicate attempts`);
    out.text(answer.tried.length === 0 ? '  nobody else' : whoDidTable(answer.tried));
    if (total === limit)
      out.note(`Showing the first ${limit} attempts: raise --limit or narrow the window to see more.`);
    return EXIT.ok;
  },
};
