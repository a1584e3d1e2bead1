import { fileURLToPath } from 'node:url';

/**
 * A module beside the caller, to start as its own process, whether the benchmarks run from source
 * under tsx (`./name.ts`, started with `--import tsx`) or compiled by `npm run bench:build`
 * (`./name.js`, started by plain node, as the executor ships).
 */
export function siblingModule(
  name: string,
  callerUrl: string,
): { readonly path: string; readonly execArgv: readonly string[] } {
  const fromSource = callerUrl.endsWith('.ts');
  return {
    path: fileURLToPath(new URL(`./${name}${fromSource ? '.ts' : '.js'}`, callerUrl)),
    execArgv: fromSource ? ['--import', 'tsx'] : [],
  };
}
