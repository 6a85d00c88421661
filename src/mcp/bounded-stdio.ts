import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { formatBytes } from '../protocol';

/** The longest request line a Caesar MCP server reads (the SDK's own bound, now answered instead of fatal). */
export const MAX_MCP_LINE_BYTES = 10 * 1024 * 1024;

/** How much of an oversized line is kept to find its request id: the SDK's clients write `"id"` last, others first. */
const ID_WINDOW_BYTES = 4096;

type RequestId = string | number | null;

/**
 * A stdio server transport, newline-delimited JSON-RPC as the SDK's StdioServerTransport, with one difference that
 * matters (issue 23): the SDK closes the whole connection when a line outgrows its 10 MiB buffer, so `caesar mcp
 * serve` exited 0 without a word and every later call failed "Not connected". Here a line over the bound is
 * dropped as it streams in (never buffered whole), answered with a JSON-RPC error naming the size and the limit,
 * and the server goes on. A line that is not JSON, or not JSON-RPC, is answered with the matching error too.
 */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private parts: Buffer[] = [];
  private size = 0;
  /** The line being dropped: its size so far, its first and last bytes (to find its id). */
  private oversized?: { bytes: number; head: Buffer; tail: Buffer };
  private started = false;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    private readonly maxLineBytes = MAX_MCP_LINE_BYTES,
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.parts = [];
    this.size = 0;
    this.oversized = undefined;
    this.onclose?.();
  }

  private readonly onStreamError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start <= data.length) {
      const newline = data.indexOf(0x0a, start);
      this.take(data.subarray(start, newline < 0 ? data.length : newline));
      if (newline < 0) break;
      this.endLine();
      start = newline + 1;
    }
  };

  private take(part: Buffer): void {
    if (!part.length) return;
    if (this.oversized) {
      this.oversized.bytes += part.length;
      this.oversized.tail = lastBytes(Buffer.concat([this.oversized.tail, part]), ID_WINDOW_BYTES);
      return;
    }
    if (this.size + part.length <= this.maxLineBytes) {
      this.parts.push(part);
      this.size += part.length;
      return;
    }
    const sofar = Buffer.concat([...this.parts, part]);
    this.oversized = { bytes: sofar.length, head: Buffer.from(sofar.subarray(0, ID_WINDOW_BYTES)), tail: lastBytes(sofar, ID_WINDOW_BYTES) };
    this.parts = [];
    this.size = 0;
  }

  private endLine(): void {
    const oversized = this.oversized;
    this.oversized = undefined;
    if (oversized) {
      const message = `Request too large: ${formatBytes(oversized.bytes)}, over the ${formatBytes(this.maxLineBytes)} a request line may hold; it was not read.`;
      this.onerror?.(new Error(message));
      void this.sendError(idOfOversized(oversized.head, oversized.tail), ErrorCode.InvalidRequest, message);
      return;
    }
    const line = Buffer.concat(this.parts).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.size = 0;
    if (!line.trim()) return;
    this.deliver(line);
  }

  private deliver(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      this.onerror?.(err as Error);
      void this.sendError(null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.onerror?.(new Error(`Invalid JSON-RPC message: ${parsed.error.message}`));
      const id = (value as { id?: unknown } | null)?.id;
      // A message without an id is a notification (or a response): nothing may answer it.
      if (typeof id === 'string' || typeof id === 'number') void this.sendError(id, ErrorCode.InvalidRequest, 'Invalid request: not a JSON-RPC 2.0 message.');
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private sendError(id: RequestId, code: number, message: string): Promise<void> {
    // JSON-RPC allows a null id for an error whose request's id could not be read; the SDK's types do not.
    return this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => undefined);
  }
}

/**
 * The id of a request too large to parse: `"id": <value>` closing the object (how the SDK's clients write it) or
 * opening it (`{"jsonrpc":"2.0","id":…` or `{"id":…`, how most others do). null when it is neither.
 */
function idOfOversized(head: Buffer, tail: Buffer): RequestId {
  const value = '("(?:[^"\\\\]|\\\\.){0,256}"|-?\\d{1,20})';
  const atEnd = new RegExp(`"id"\\s*:\\s*${value}\\s*}\\s*\\r?$`).exec(tail.toString('utf8'));
  const atStart = new RegExp(`^\\s*\\{\\s*(?:"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*)?"id"\\s*:\\s*${value}`).exec(head.toString('utf8'));
  const found = atEnd?.[1] ?? atStart?.[1];
  if (found === undefined) return null;
  try {
    return JSON.parse(found) as string | number;
  } catch {
    return null;
  }
}

function lastBytes(buffer: Buffer, count: number): Buffer {
  return buffer.length <= count ? buffer : Buffer.from(buffer.subarray(buffer.length - count));
}
