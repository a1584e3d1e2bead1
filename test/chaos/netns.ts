import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Every namespace and interface a network scenario creates starts with this, and nothing else does. */
export const NETNS_PREFIX = 'tgc';
/** Where each lab records the pid of the process that owns it, so a tidy spares labs still in use. */
const OWNERS_DIR = join(tmpdir(), 'toolgate-netlab');
/** The private range the scenarios' hosts live in (10.213.<n>.0/24 per network). */
const RANGE = '10.213';

/**
 * A small private network of "hosts" for one scenario: the root namespace (where the test process,
 * its servers and its fault proxies run) is the hub, with one bridge per network and an address on
 * each bridge; every other host is a network namespace with one veth per network, its peer a port
 * of that network's bridge. Traffic in a namespace can reach only the hub's addresses on its
 * networks (there is no default route), so a child run there reaches nothing but what the scenario
 * proxies to it.
 *
 * Why the servers stay in the root namespace: they are the suite's ordinary private servers on
 * 127.0.0.1 (private-servers.ts, private-kafka.ts), and the fault proxy in front of each one is the
 * single place where a link gets latency, resets or a black hole — per source host — while
 * `cut`/`heal` take a host's veth down and up for a real partition (packets dropped, no RST).
 */
export interface NetLab {
  /** This run's id: namespaces are `<id>-<host>`, bridges `<id><network>`. */
  readonly id: string;
  /** The hub's address on a network (where a proxy for that network listens). */
  hubAddress(network: string): string;
  /** A host's address on a network. */
  hostAddress(host: string, network: string): string;
  /** The argv prefix that runs a command inside a host (`ip netns exec <ns>`). */
  launcher(host: string): string[];
  /** Takes the hub side of a host's link on a network down: packets are dropped, sockets stay open. */
  cut(host: string, network: string): Promise<void>;
  heal(host: string, network: string): Promise<void>;
  /** Removes every namespace, bridge and veth of this run (idempotent; never throws). */
  destroy(): Promise<void>;
}

async function ip(...args: string[]): Promise<string> {
  const { stdout } = await run('ip', args);
  return stdout;
}

const LAB_ID = new RegExp(`^(${NETNS_PREFIX}[0-9a-f]{6})`);

/** True when the lab's owner process is still alive (a parallel run's lab is left alone). */
function ownerAlive(id: string): boolean {
  try {
    process.kill(Number(readFileSync(join(OWNERS_DIR, id), 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
}

function stale(name: string): boolean {
  const id = LAB_ID.exec(name)?.[1];
  return id !== undefined && !ownerAlive(id);
}

/**
 * Removes namespaces and links left by an earlier run of the scenarios that was aborted before
 * its own cleanup (names `tgc…` whose owning process is gone): a veth or namespace of a dead run
 * would otherwise hold its addresses for ever. Only names of this pattern are touched.
 */
export async function tidyStaleNetworks(): Promise<string[]> {
  const removed: string[] = [];
  const namespaces = (await ip('netns', 'list'))
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => new RegExp(`^${NETNS_PREFIX}[0-9a-f]{6}-`).test(n) && stale(n));
  for (const ns of namespaces) {
    // Processes an aborted run left in its namespaces (its executor children) go with it.
    const pids = (await ip('netns', 'pids', ns).catch(() => '')).split('\n').filter((p) => /^\d+$/.test(p));
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await ip('netns', 'del', ns).catch(() => undefined);
    removed.push(ns);
  }
  const links = (await ip('-o', 'link', 'show'))
    .split('\n')
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '')
    .filter(stale);
  for (const link of links) {
    await ip('link', 'del', link).catch(() => undefined);
    removed.push(link);
  }
  for (const name of removed) {
    const id = LAB_ID.exec(name)?.[1];
    if (id !== undefined) rmSync(join(OWNERS_DIR, id), { force: true });
  }
  return removed;
}

/** Third octets already used by an address of this machine in the private range. */
async function usedOctets(): Promise<Set<number>> {
  const used = new Set<number>();
  for (const m of (await ip('-4', '-o', 'addr')).matchAll(/inet 10\.213\.(\d+)\./g)) used.add(Number(m[1]));
  return used;
}

/**
 * Creates hosts `hosts` (each a namespace) on networks `networks` (each a bridge in the root
 * namespace with its own /24). Host i is `.<10+i>` on every network, the hub `.1`.
 */
export async function createNetLab(hosts: readonly string[], networks: readonly string[]): Promise<NetLab> {
  const id = `${NETNS_PREFIX}${randomBytes(3).toString('hex')}`;
  mkdirSync(OWNERS_DIR, { recursive: true });
  writeFileSync(join(OWNERS_DIR, id), String(process.pid));
  const used = await usedOctets();
  const octets = new Map<string, number>();
  for (const network of networks) {
    let octet = 0;
    for (let tries = 0; tries < 200 && (octet === 0 || used.has(octet)); tries++)
      octet = 2 + Math.floor(Math.random() * 250);
    if (used.has(octet) || octet === 0) throw new Error('no free /24 in 10.213.0.0/16');
    used.add(octet);
    octets.set(network, octet);
  }
  const net = (network: string): number => {
    const o = octets.get(network);
    if (o === undefined) throw new Error(`unknown network ${network}`);
    return o;
  };
  const hostIndex = (host: string): number => {
    const i = hosts.indexOf(host);
    if (i < 0) throw new Error(`unknown host ${host}`);
    return i;
  };
  const ns = (host: string): string => `${id}-${host}`;
  const bridge = (network: string): string => `${id}${network}`;
  // Hub side of a host's veth: `<id><network><i>` (at most 15 characters).
  const hubEnd = (host: string, network: string): string => `${id}${network}${hostIndex(host)}`;
  const hubAddress = (network: string): string => `${RANGE}.${net(network)}.1`;
  const hostAddress = (host: string, network: string): string =>
    `${RANGE}.${net(network)}.${10 + hostIndex(host)}`;

  const destroy = async (): Promise<void> => {
    for (const host of hosts) await ip('netns', 'del', ns(host)).catch(() => undefined);
    for (const network of networks) {
      for (const host of hosts) await ip('link', 'del', hubEnd(host, network)).catch(() => undefined);
      await ip('link', 'del', bridge(network)).catch(() => undefined);
    }
    rmSync(join(OWNERS_DIR, id), { force: true });
  };
  try {
    for (const network of networks) {
      await ip('link', 'add', bridge(network), 'type', 'bridge');
      await ip('addr', 'add', `${hubAddress(network)}/24`, 'dev', bridge(network));
      await ip('link', 'set', bridge(network), 'up');
    }
    for (const host of hosts) {
      await ip('netns', 'add', ns(host));
      await ip('-n', ns(host), 'link', 'set', 'lo', 'up');
      for (const network of networks) {
        const peer = `${hubEnd(host, network)}p`;
        await ip('link', 'add', hubEnd(host, network), 'type', 'veth', 'peer', 'name', peer);
        await ip('link', 'set', peer, 'netns', ns(host));
        await ip('-n', ns(host), 'link', 'set', peer, 'name', `eth-${network}`);
        await ip('-n', ns(host), 'addr', 'add', `${hostAddress(host, network)}/24`, 'dev', `eth-${network}`);
        await ip('-n', ns(host), 'link', 'set', `eth-${network}`, 'up');
        await ip('link', 'set', hubEnd(host, network), 'master', bridge(network));
        await ip('link', 'set', hubEnd(host, network), 'up');
      }
    }
  } catch (error) {
    await destroy();
    throw error;
  }
  return {
    id,
    hubAddress,
    hostAddress,
    launcher: (host) => ['ip', 'netns', 'exec', ns(host)],
    cut: async (host, network) => {
      await ip('link', 'set', hubEnd(host, network), 'down');
    },
    heal: async (host, network) => {
      await ip('link', 'set', hubEnd(host, network), 'up');
    },
    destroy,
  };
}
