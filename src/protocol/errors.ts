import type { z } from 'zod';

/** A document that is not valid JSON, is too large, or does not match its schema. The message names the field. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(issues.length ? `${message}: ${issues.join('; ')}` : message);
  }
}

export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join('.') : '(document)';
    return `${where}: ${issue.message}`;
  });
}

/** Upper bounds for untrusted documents; past these we refuse rather than allocate without limit. */
export const MAX_BYTES = {
  task: 4 * 1024 * 1024,
  report: 4 * 1024 * 1024,
  /** The agent's report (≤ 4 MiB) plus what reconciliation adds, its lists capped (engine/store/result-caps.ts). */
  result: 16 * 1024 * 1024,
  eventLine: 1024 * 1024,
} as const;

/** JSON.parse with a size bound and an error that says which document failed and why. */
export function parseJsonBounded(text: string, what: string, maxBytes: number): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new ProtocolError(`${what} is ${formatBytes(bytes)}, over the ${formatBytes(maxBytes)} limit`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ProtocolError(`${what} is not valid JSON (${(err as Error).message})`);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
