import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

/** A container's environment entry, as far as these tests read it. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; configMapKeyRef?: { name: string; key: string } };
}

/** A container of a Deployment, as far as these tests read it. */
export interface Container {
  name: string;
  image: string;
  command: string[];
  ports: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env?: EnvVar[];
  readinessProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  resources?: { requests?: { memory?: string; cpu?: string }; limits?: { memory?: string } };
  volumeMounts?: { name: string; mountPath: string }[];
}

/** One Kubernetes resource of deploy/k8s, as far as these tests read it. */
export interface Resource {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: Record<string, unknown>;
}

const dir = new URL('../../../deploy/k8s/', import.meta.url);

/** Every document of every .yaml file in deploy/k8s; a document that does not parse throws, naming its file. */
export const K8S_RESOURCES: readonly Resource[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(new URL(f, dir), 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${f}: ${d.errors[0]!.message}`);
      return d.toJS() as Resource;
    }),
  );

/** The resource of `kind` named `name` in `from` (default: deploy/k8s); throws when there is none. */
export function named(kind: string, name: string, from: readonly Resource[] = K8S_RESOURCES): Resource {
  const r = from.find((x) => x.kind === kind && x.metadata.name === name);
  if (!r) throw new Error(`no ${kind} ${name} in deploy/k8s`);
  return r;
}
