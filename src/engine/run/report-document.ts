import * as path from 'node:path';
import {
  UnsupportedVersionError,
  parseJsonBounded,
  parseReport,
  salvageReport,
  type Finding,
  type Report,
  type ReportStatus,
} from '../../protocol';
import { readJsonText } from '../store/atomic';

/** U+FEFF as the first character: Windows editors and PowerShell's `Out-File -Encoding utf8` write one. */
const BOM = '\uFEFF';

/**
 * The agent's report.json as JSON, not yet validated: undefined when there is none. Bounded, regular files only
 * (never a FIFO or a link, see safe-read.ts), and a leading UTF-8 byte-order mark is tolerated: JSON.parse refuses
 * it, and a `blocked` report written by a Windows tool must not be lost over an invisible character.
 */
export async function readReportDocument(file: string, maxBytes: number): Promise<unknown> {
  const text = await readJsonText(file, maxBytes);
  if (text === undefined) return undefined;
  return parseJsonBounded(text.startsWith(BOM) ? text.slice(1) : text, path.basename(file), maxBytes);
}

/** What report.json amounts to once read: a valid report, a report rebuilt from its readable fields, or a refusal. */
export type ReportFileVerdict =
  | { kind: 'valid'; report: Report }
  | { kind: 'salvaged'; report: Report; error: string; finding: Finding }
  /** Refused; `status` is the agent's verdict when it could still be read (an unknown version's, say). */
  | { kind: 'refused'; error: string; status?: ReportStatus };

/**
 * Validates a report.json document. One malformed field no longer costs the agent its word (issue 23): the report
 * is rebuilt from what validates, keeping the status the agent wrote, and the finding names each field left out.
 * A document of an unknown version is still refused whole (its fields may mean something else), but its status, if
 * readable, is returned so the caller never upgrades it.
 */
export function judgeReportDocument(doc: unknown): ReportFileVerdict {
  try {
    return { kind: 'valid', report: parseReport(doc) };
  } catch (err) {
    const error = `report.json was refused: ${describe(err)}.`;
    const salvaged = salvageReport(doc);
    if (err instanceof UnsupportedVersionError || !salvaged.report) {
      return { kind: 'refused', error, ...(salvaged.status ? { status: salvaged.status } : {}) };
    }
    const fields = salvaged.dropped.length ? salvaged.dropped.join(', ') : 'none';
    return {
      kind: 'salvaged',
      report: salvaged.report,
      error,
      finding: {
        severity: 'high',
        title: 'Agent report partly unreadable',
        detail: `${error} Its status "${salvaged.status}" is kept as the agent wrote it; unreadable fields left out: ${fields}.`,
      },
    };
  }
}

function describe(err: unknown): string {
  return (err as Error)?.message?.replace(/\.$/, '') ?? String(err);
}
