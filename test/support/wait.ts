/**
 * The one way tests wait for something another process or an fs watcher will make true: `probe` is re-run every
 * `intervalMs` until it returns a value other than `undefined`/`false`, which is returned. Functional tests wait for
 * facts, never for a fixed time; the timeout is only a bound on a hung run and its message names what never came.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
