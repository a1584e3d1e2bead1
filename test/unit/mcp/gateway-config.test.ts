import { describe, expect, it } from 'vitest';
import { loadMcpGatewayConfig, McpGatewayConfigError } from '../../../services/mcp-gateway/config.js';

const ENV = {
  KAFKA_BROKERS: 'k1:9092,k2:9092',
  SCHEMA_REGISTRY_URL: 'http://registry:8081',
  REDIS_URL: 'redis://redis:6379',
  MCP_RESOURCE_URL: 'https://tools.example.com/mcp',
  MCP_OAUTH_ISSUER: 'https://auth.example.com',
  MCP_OAUTH_JWKS_URL: 'https://auth.example.com/jwks.json',
  MCP_CONFIRMATION_SECRET_FILE: '/s/secret',
  PRINCIPAL_SIGNING_KEY_FILE: '/s/key.pem',
};
const files: Record<string, Buffer> = {
  '/s/secret': Buffer.alloc(32, 7),
  '/s/key.pem': Buffer.from('-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n'),
};
const read = (path: string): Buffer => {
  const found = files[path];
  if (found === undefined) throw new Error('ENOENT');
  return found;
};

describe('MCP gateway configuration', () => {
  it('defaults the allowed host to the resource URL’s and the required scope to mcp:tools', () => {
    const config = loadMcpGatewayConfig(ENV, read);
    expect(config.allowedHosts).toEqual(['tools.example.com']);
    expect(config.oauth.requiredScopes).toEqual(['mcp:tools']);
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.confirmationSecret.byteLength).toBe(32);
  });

  it('waits 30 s for a call and lets executors run it for ten minutes, unless told otherwise', () => {
    const config = loadMcpGatewayConfig(ENV, read);
    expect([config.callTimeoutMs, config.callDeadlineMs]).toEqual([30_000, 600_000]);
    const set = loadMcpGatewayConfig(
      { ...ENV, MCP_CALL_TIMEOUT_MS: '5000', MCP_CALL_DEADLINE_MS: '90000' },
      read,
    );
    expect([set.callTimeoutMs, set.callDeadlineMs]).toEqual([5_000, 90_000]);
    expect(() => loadMcpGatewayConfig({ ...ENV, MCP_CALL_DEADLINE_MS: '0' }, read)).toThrow(
      /MCP_CALL_DEADLINE_MS/,
    );
  });

  it('names every missing variable, and a short secret, without echoing values', () => {
    expect(() =>
      loadMcpGatewayConfig({ ...ENV, MCP_OAUTH_ISSUER: undefined, MCP_RESOURCE_URL: 'nope' }, read),
    ).toThrow(/MCP_OAUTH_ISSUER[\s\S]*MCP_RESOURCE_URL|MCP_RESOURCE_URL[\s\S]*MCP_OAUTH_ISSUER/);
    files['/s/short'] = Buffer.alloc(8);
    expect(() => loadMcpGatewayConfig({ ...ENV, MCP_CONFIRMATION_SECRET_FILE: '/s/short' }, read)).toThrow(
      McpGatewayConfigError,
    );
    expect(() => loadMcpGatewayConfig({ ...ENV, PRINCIPAL_SIGNING_KEY_FILE: '/missing' }, read)).toThrow(
      /PRINCIPAL_SIGNING_KEY_FILE/,
    );
  });
});
