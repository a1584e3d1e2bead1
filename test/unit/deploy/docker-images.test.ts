import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The Dockerfiles read as text (no Docker engine here): what a `docker build` of each would need
 * from its context, which image it builds on, the user it runs as and the command it starts.
 */

const root = new URL('../../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Instructions in order: comments dropped, `\` continuations joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue; // a comment inside a continued instruction
    pending += `${line.replace(/\\$/, '').trim()} `;
    if (line.endsWith('\\')) continue;
    const [keyword, ...rest] = pending.trim().split(/\s+/);
    out.push({ keyword: keyword!.toUpperCase(), args: rest.join(' ') });
    pending = '';
  }
  return out;
}

/** The instructions of the last stage (from its FROM on), with ARG defaults declared before any FROM. */
function finalStage(text: string): { from: string; body: Instruction[] } {
  const all = instructions(text);
  const args = new Map<string, string>();
  for (const i of all) {
    if (i.keyword === 'FROM') break;
    if (i.keyword === 'ARG') {
      const [name, value] = i.args.split('=');
      if (value !== undefined) args.set(name!, value);
    }
  }
  const start = all.map((i) => i.keyword).lastIndexOf('FROM');
  const from = all[start]!.args.split(/\s+/)[0]!.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (ref, a?: string, b?: string) => {
      const value = args.get((a ?? b)!);
      if (value === undefined) throw new Error(`FROM uses ${ref}, which no ARG before it gives a default`);
      return value;
    },
  );
  return { from, body: all.slice(start + 1) };
}

/** `COPY [--flags] src... dest` (shell form), without copies from another stage. */
function contextCopies(body: readonly Instruction[]): Array<{ sources: string[]; dest: string }> {
  return body
    .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
    .map((i) => i.args.split(/\s+/))
    .filter((words) => !words.some((w) => w.startsWith('--from=')))
    .map((words) => {
      const paths = words.filter((w) => !w.startsWith('--'));
      return { sources: paths.slice(0, -1), dest: paths.at(-1)! };
    });
}

/** An exec-form (JSON array) instruction's words. */
function execForm(body: readonly Instruction[], keyword: string): string[] | undefined {
  const found = body.filter((i) => i.keyword === keyword).at(-1);
  return found === undefined ? undefined : (JSON.parse(found.args) as string[]);
}

/** The image tag a `docker build … -t <tag> …` line in `text` gives. */
function builtTag(text: string): string {
  const m = /docker build\b[^\n]*\s-t\s+(\S+)/.exec(text);
  if (!m) throw new Error('no `docker build -t <tag>` line');
  return m[1]!;
}

const mainText = read('deploy/docker/Dockerfile');
const main = finalStage(mainText);
const catalogText = read('deploy/docker/catalog-image.Dockerfile');
const catalog = finalStage(catalogText);
const readme = read('deploy/docker/README.md');
const mainTag = builtTag(mainText);

interface PodSecurity {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
}
interface ContainerSecurity extends PodSecurity {
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}
interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: {
    template: {
      spec: {
        securityContext?: PodSecurity;
        containers: Array<{
          image: string;
          securityContext?: ContainerSecurity;
          volumeMounts?: Array<{ name: string; mountPath: string }>;
        }>;
        volumes?: Array<{ name: string; emptyDir?: object }>;
      };
    };
  };
}

const k8sDir = new URL('deploy/k8s/', root);
const deployments = readdirSync(k8sDir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(new URL(f, k8sDir), 'utf8')).map((d) => d.toJS() as Deployment),
  )
  // The workloads: Deployments, and a StatefulSet where a service needs stable pod names.
  .filter((r) => r.kind === 'Deployment' || r.kind === 'StatefulSet');

describe('deploy/docker/Dockerfile', () => {
  const user = main.body.filter((i) => i.keyword === 'USER').at(-1)?.args;
  const [uid, gid] = (user ?? '').split(':');

  it('runs as a numeric user and group that it creates, not as root', () => {
    expect(user, 'USER of the final stage').toMatch(/^\d+:\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    expect(Number(gid)).toBeGreaterThan(0);
    const runs = main.body.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => new RegExp(`groupadd\\b.*--gid ${gid}\\b`).test(r))).toBe(true);
    expect(runs.some((r) => new RegExp(`useradd\\b.*--uid ${uid}\\b.*--gid ${gid}\\b`).test(r))).toBe(true);
    // Nothing after USER runs as root again.
    const afterUser = main.body.slice(main.body.findIndex((i) => i.keyword === 'USER') + 1);
    expect(afterUser.filter((i) => i.keyword === 'USER' || i.keyword === 'RUN')).toEqual([]);
  });

  it('copies only what the repository has, and what its .dockerignore lets through', () => {
    const ignored = read('deploy/docker/Dockerfile.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const build = instructions(mainText);
    for (const { sources } of contextCopies(build)) {
      for (const source of sources) {
        expect(existsSync(new URL(source, root)), source).toBe(true);
        expect(ignored, source).not.toContain(source);
      }
    }
  });

  it('puts the toolgate bin on the PATH: the CLI main is built from a file with a node shebang', () => {
    const link = main.body.find((i) => i.keyword === 'RUN' && i.args.includes('/usr/local/bin/toolgate'));
    expect(link?.args).toContain('ln -s /app/dist/services/cli/main.js /usr/local/bin/toolgate');
    expect(link?.args).toContain('chmod 0755 dist/services/cli/main.js');
    expect(read('services/cli/main.ts').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('is the image docker-compose and deploy/k8s run', () => {
    expect(mainTag).toBe('toolgate:0.1.0');
    const compose = parse(read('docker-compose.yml'), { merge: true }) as {
      services: Record<string, { image?: string; build?: { dockerfile?: string } }>;
    };
    const built = Object.values(compose.services).filter(
      (s) => s.build?.dockerfile === 'deploy/docker/Dockerfile',
    );
    expect(built.length).toBeGreaterThan(0);
    for (const s of built) expect(s.image).toBe(mainTag);
    // One workload per service manifest, named after it (config.yaml holds only settings).
    const serviceManifests = readdirSync(k8sDir).filter((f) => f.endsWith('.yaml') && f !== 'config.yaml');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(
      serviceManifests.map((f) => `toolgate-${f.replace(/\.yaml$/, '')}`).sort(),
    );
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers) expect(c.image, d.metadata.name).toBe(mainTag);
    }
  });

  it("docker-compose runs every toolgate service as the image's user, read-only, /tmp in memory", () => {
    const compose = parse(read('docker-compose.yml'), { merge: true }) as {
      services: Record<string, { image?: string; user?: string; read_only?: boolean; tmpfs?: string[] }>;
    };
    const ours = Object.entries(compose.services).filter(([, s]) => s.image === mainTag);
    expect(ours.map(([name]) => name).sort()).toEqual([
      'audit-sink',
      'executor-1',
      'executor-2',
      'reconciler',
    ]);
    for (const [name, s] of ours) {
      expect(s, name).toMatchObject({ user: `${uid}:${gid}`, read_only: true, tmpfs: ['/tmp'] });
    }
  });

  it("every Deployment runs as the image's user, non-root, read-only, without privilege escalation", () => {
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext, d.metadata.name).toMatchObject({
        runAsNonRoot: true,
        runAsUser: Number(uid),
        runAsGroup: Number(gid),
      });
      for (const c of pod.containers) {
        expect(c.securityContext, d.metadata.name).toMatchObject({
          runAsNonRoot: true,
          runAsUser: Number(uid),
          runAsGroup: Number(gid),
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        // A read-only root: /tmp is an emptyDir.
        const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
        expect(tmp, `${d.metadata.name} /tmp`).toBeDefined();
        expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
      }
    }
  });
});

describe('deploy/docker/catalog-image.Dockerfile (your own tools)', () => {
  const buildLine = /docker build -f deploy\/docker\/catalog-image\.Dockerfile[^\n]*/.exec(catalogText)?.[0];
  const context = buildLine?.trim().split(/\s+/).at(-1);
  const copies = contextCopies(catalog.body);

  it('documents its build context, and every COPY source exists there', () => {
    expect(context).toBe('deploy/docker/catalog-example');
    expect(readme).toContain(buildLine!.replace(/^#\s*/, ''));
    expect(copies.length).toBeGreaterThan(0);
    for (const { sources } of copies) {
      for (const source of sources) {
        expect(existsSync(new URL(`${context}/${source}`, root)), `${context}/${source}`).toBe(true);
      }
    }
  });

  it('builds on the main image: its FROM (ARG default) is the tag the main Dockerfile builds', () => {
    expect(catalog.from).toBe(mainTag);
    expect(readme).toContain(`FROM ${mainTag}`);
  });

  it('starts `toolgate executor --catalog <the copied module>`, as the README shows', () => {
    const module = copies.find((c) => c.sources.includes('my-tools.ts'))?.dest;
    expect(module).toBe('/app/catalog/my-tools.ts');
    const entrypoint = execForm(catalog.body, 'ENTRYPOINT');
    expect(entrypoint).toEqual(['toolgate', 'executor', '--catalog', module]);
    expect(readme).toContain(`COPY my-tools.ts ${module}`);
    expect(readme).toContain(`ENTRYPOINT ${JSON.stringify(entrypoint).replaceAll(',', ', ')}`);
    // It stays in the user's numeric user: the catalog image sets none of its own.
    expect(catalog.body.filter((i) => i.keyword === 'USER')).toEqual([]);
  });

  it('the example catalog imports only what the image has at run time', () => {
    const pkg = JSON.parse(read('package.json')) as {
      name: string;
      exports: Record<string, unknown>;
      dependencies: Record<string, string>;
    };
    const source = read('deploy/docker/catalog-example/my-tools.ts');
    const imports = [...source.matchAll(/^import [^;]* from '([^']+)';/gm)].map((m) => m[1]!);
    expect(imports.length).toBeGreaterThan(0);
    for (const specifier of imports) {
      if (specifier === pkg.name || specifier.startsWith(`${pkg.name}/`)) {
        // The package importing itself by name: its exports must list the subpath.
        const subpath = specifier === pkg.name ? '.' : `.${specifier.slice(pkg.name.length)}`;
        expect(pkg.exports, specifier).toHaveProperty([subpath]);
      } else {
        // The final image keeps production dependencies only (npm prune --omit=dev).
        expect(pkg.dependencies, specifier).toHaveProperty([specifier]);
      }
    }
    expect(source).toMatch(/^export default defineCatalog\(/m);
    // A .ts catalog is loaded through tsx at run time, so tsx must survive the prune too.
    expect(pkg.dependencies).toHaveProperty(['tsx']);
  });
});
