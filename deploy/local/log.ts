/** Where a launcher reports progress: one human-readable line per call. */
export type LauncherLog = (line: string) => void;

/** Writes launcher lines to stderr, prefixed so they stand out in test and CI output. */
export const stderrLog: LauncherLog = (line) => {
  process.stderr.write(`[toolgate-local] ${line}\n`);
};

/** Discards launcher lines. */
export const silentLog: LauncherLog = () => undefined;
