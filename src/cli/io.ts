/** Exit codes of the caesar command (reference §6.1): 0 success, 1 runtime failure, 2 usage or configuration error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A mistake of the caller: bad flag, unknown agent, refused by policy, invalid config. Exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Where a command writes. Injected so tests can capture output without a TTY. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readonly stdoutIsTTY: boolean;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Keyboard input for interactive views (watch's `q`); absent when there is none. */
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  /** Width of the terminal, for views that fit lines to it. */
  readonly columns?: number;
  /** Stops long-running commands (watch, logs --follow, cancel --wait) as Ctrl-C would; tests use it. */
  readonly abort?: AbortSignal;
}

/** Ends a command with a given exit code after it has printed its own output (e.g. apply conflicts as JSON, exit 1). */
export class ExitCode extends Error {
  override readonly name = 'ExitCode';
  constructor(
    readonly code: number,
    /** Printed on stderr as `caesar: <message>` when not empty. */
    message = '',
  ) {
    super(message);
  }
}

export function processIo(): CliIo {
  endQuietlyWhenReaderCloses(process.stdout);
  endQuietlyWhenReaderCloses(process.stderr);
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    cwd: process.cwd(),
    env: process.env,
    // Lazy: touching process.stdin opens fd 0, which only interactive commands need.
    get stdin() {
      return process.stdin;
    },
    get columns() {
      return process.stdout.columns;
    },
  };
}

/**
 * `caesar watch | head -5`: once the reader is gone, the next write fails with EPIPE. Nobody is left to read anything
 * we could say, so the command ends at once, quietly and with success, instead of dying on an unhandled error with a
 * stack trace. Detached work (a task's supervisor) is not ours to stop and goes on. Other write errors stay fatal.
 */
const guardedStreams = new WeakSet<NodeJS.WriteStream>();
function endQuietlyWhenReaderCloses(stream: NodeJS.WriteStream): void {
  if (guardedStreams.has(stream)) return;
  guardedStreams.add(stream);
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
    throw err;
  });
}

/** Pretty JSON on one write, for `--json` outputs that must be parseable as a whole. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}
