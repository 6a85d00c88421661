/**
 * Every command's work is done once the CLI's promise resolves (the MCP servers resolve when their client has gone).
 * Ending the process here, rather than letting the event loop drain, skips tearing down the heap and every file
 * watcher: 50–100 ms of a short command such as `caesar run` (issue 14). Output is flushed first: writes to a pipe are
 * asynchronous on some platforms.
 */
export function exitOnceFlushed(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.destroyed || !stream.writable) flushed();
    else stream.write('', () => flushed());
  }
}

/** A CLI promise that rejected (a bug: commands map their errors to exit codes): its stack on stderr, exit 1. */
export function reportCrash(err: unknown): void {
  process.stderr.write(`caesar: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
}
