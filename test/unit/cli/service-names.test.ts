import { describe, expect, it } from 'vitest';
import { SERVICE_COMMANDS } from '../../../services/cli/serve.js';
import { SERVICE_NAMES } from '../../../services/cli/service-names.js';

describe('toolgate service commands', () => {
  it('routes every service command the bin knows to serve.ts, and only those', () => {
    expect([...SERVICE_NAMES].sort()).toEqual(Object.keys(SERVICE_COMMANDS).sort());
  });
});
