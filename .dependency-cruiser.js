// @ts-check
/**
 * The layering of libs/ and services/, enforced by `npm run lint` (`depcruise libs services`).
 * Type-only imports count: a type import is still a dependency of the design, and the cycles
 * between folders that this file forbids were all made of types.
 *
 * Composition roots — the folders that exist to assemble services into something runnable — may
 * import other services; every other service imports libs only.
 */

/** Folders whose job is to put services together (see rule services-import-libs-not-services). */
const COMPOSITION_ROOTS = [
  // The `toolgate` bin: one command per service, so it imports every service it starts.
  'cli',
  // The in-process topology (SDK, executors, audit sink, reconciler on one memory bus) and the
  // agent test kit built on it.
  'embedded',
  // The demo story: the store catalog, its fake services and the embedded topology in one process.
  'demo',
  // The offline evaluation: runs the store catalog and its fake services against recorded turns.
  'eval',
];

/**
 * The demo world: the store catalog (catalog), the fake services behind it (downstreams) and the
 * legacy filing system one of its tools wraps. Its parts import each other, and nothing else of
 * services/ (rule demo-world-stays-in-the-demo-world).
 */
const DEMO_WORLD = ['catalog', 'downstreams', 'legacy-filing'];

const oneOf = (/** @type {string[]} */ names) => `^services/(${names.join('|')})/`;

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'libs-never-import-services',
      comment:
        'libs is the library the services are built from; a libs module importing a service inverts that.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
    {
      name: 'core-imports-only-core',
      comment: 'libs/core is the vocabulary every layer shares, so it can depend on no other layer of ours.',
      severity: 'error',
      from: { path: '^libs/core/' },
      to: { path: '^(libs|services)/', pathNot: '^libs/core/' },
    },
    {
      name: 'ports-import-only-core',
      comment:
        'Ports are the interfaces adapters implement; they speak core types only, or every adapter would drag in a layer.',
      severity: 'error',
      from: { path: '^libs/ports/' },
      to: { path: '^(libs|services)/', pathNot: '^libs/(core|ports)/' },
    },
    {
      name: 'no-cycles-between-libs-folders',
      comment:
        'A cycle between two libs folders makes them one unit that cannot be read, tested or changed alone.',
      severity: 'error',
      // Folder scope: the graph of folders, where a folder depends on another when one of its modules
      // (at any depth) imports a module of the other. Every libs folder is checked, nested ones too,
      // so a cycle between libs/adapters/memory and libs/patterns/jobs is caught although neither
      // libs/adapters nor libs/patterns holds a module of its own. A folder importing its parent is
      // not a cycle: a folder's imports of its own subfolders do not count.
      scope: 'folder',
      from: { path: '^libs/' },
      to: { circular: true },
    },
    {
      name: 'services-import-libs-not-services',
      comment:
        'A service shares code through libs, so each one can be read, deployed and changed on its own.',
      severity: 'error',
      from: {
        path: '^services/([^/]+)/',
        pathNot: oneOf([...COMPOSITION_ROOTS, ...DEMO_WORLD, 'mcp-gateway']),
      },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'mcp-gateway-imports-only-the-sdk',
      comment:
        'The gateway is an SDK client: it publishes calls through the public SDK, nothing else of a service.',
      severity: 'error',
      from: { path: '^services/mcp-gateway/' },
      to: { path: '^services/', pathNot: '^services/(mcp-gateway|sdk)/' },
    },
    {
      name: 'demo-world-stays-in-the-demo-world',
      comment: 'The demo catalog and its fake services import each other, never the services that run them.',
      severity: 'error',
      from: { path: oneOf(DEMO_WORLD) },
      to: { path: '^services/', pathNot: oneOf(DEMO_WORLD) },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Folder-scoped rules (the cycle rule) need the folder graph, which dependency-cruiser builds
    // with its metrics.
    metrics: true,
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
