import { describe, expect, it } from 'vitest';
import { parseRedisClusterUrl } from '../../../libs/adapters/redis/connect.js';

describe('redis-cluster:// URLs', () => {
  it('leaves single-server URLs alone', () => {
    expect(parseRedisClusterUrl('redis://127.0.0.1:6379')).toBeUndefined();
    expect(parseRedisClusterUrl('rediss://cache.internal:6380/2')).toBeUndefined();
  });

  it('takes every seed, in order', () => {
    expect(parseRedisClusterUrl('redis-cluster://10.0.0.1:7000,10.0.0.2:7001,cache-2:7002')).toEqual({
      seeds: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'cache-2', port: 7002 },
      ],
    });
  });

  it('takes a password, or a user and password, percent-decoded, for every node', () => {
    expect(parseRedisClusterUrl('redis-cluster://:s%40cret@h:7000')).toEqual({
      seeds: [{ host: 'h', port: 7000 }],
      password: 's@cret',
    });
    expect(parseRedisClusterUrl('redis-cluster://toolgate:pa%3Ass@h:7000,h:7001')).toEqual({
      seeds: [
        { host: 'h', port: 7000 },
        { host: 'h', port: 7001 },
      ],
      username: 'toolgate',
      password: 'pa:ss',
    });
  });

  it('refuses a cluster URL without seeds, or with a seed that is not host:port', () => {
    expect(() => parseRedisClusterUrl('redis-cluster://')).toThrow(/at least one host:port seed/);
    expect(() => parseRedisClusterUrl('redis-cluster://h:7000,h')).toThrow(/'h' is not host:port/);
    expect(() => parseRedisClusterUrl('redis-cluster://h:port')).toThrow(/'h:port' is not host:port/);
  });
});
