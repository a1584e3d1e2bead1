import type { CommandGroup } from '../command.js';
import { auditQueryCommand } from './audit-query.js';
import { auditVerifyCommand } from './audit-verify.js';
import { auditWhoCommand } from './audit-who.js';
import { dlqListCommand } from './dlq-list.js';
import { dlqRedriveCommand } from './dlq-redrive.js';
import { dlqResolveCommand } from './dlq-resolve.js';
import { dlqShowCommand } from './dlq-show.js';
import { keysGenerateCommand } from './keys-generate.js';
import { policyReplayCommand } from './policy-replay.js';
import { registryExportCommand } from './registry-export.js';
import { schemasCheckCommand } from './schemas-check.js';
import { topicsCreateCommand } from './topics-create.js';

/** Every command of the CLI, by group, in the order the help lists them. */
export const COMMAND_GROUPS: readonly CommandGroup[] = [
  {
    name: 'dlq',
    summary: 'Reconciliation cases of dead-lettered calls: inspect, resolve by hand, redrive.',
    commands: [dlqListCommand, dlqShowCommand, dlqResolveCommand, dlqRedriveCommand],
  },
  {
    name: 'audit',
    summary: 'Query and verify the append-only, hash-chained audit log.',
    commands: [auditQueryCommand, auditWhoCommand, auditVerifyCommand],
  },
  {
    name: 'policy',
    summary: 'The business-rule policy: try a candidate against past calls before shipping it.',
    commands: [policyReplayCommand],
  },
  {
    name: 'registry',
    summary: 'The tool registry, as providers see it.',
    commands: [registryExportCommand],
  },
  {
    name: 'schemas',
    summary: 'The Avro event contracts.',
    commands: [schemasCheckCommand],
  },
  {
    name: 'topics',
    summary: 'The Kafka topics toolgate uses.',
    commands: [topicsCreateCommand],
  },
  {
    name: 'keys',
    summary: 'The principal-signing keys shared by agent backends and executors.',
    commands: [keysGenerateCommand],
  },
];
