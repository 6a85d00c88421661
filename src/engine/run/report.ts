import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import {
  DOCUMENT_IDS,
  MAX_BYTES,
  ChannelReportMarkerSchema,
  ProtocolError,
  UnsupportedVersionError,
  parseReport,
  type Finding,
  type Report,
  type ReportStatus,
  type ReportTier,
  type TaskPaths,
} from '../../protocol';
import type { TranslationSummary } from '../../agents/types';
import { readJsonFile } from '../store/atomic';
import { judgeReportDocument, readReportDocument } from './report-document';
import { openRegularFile, readRegularFileBounded } from '../../base/safe-read';
import type { ReportSource } from '../../protocol';

/**
 * Where the task's report comes from (reference §2.8, OACP "How the report is retrieved"), best tier first:
 * channel/file (report.json) > schema (the CLI's structured final answer) > extracted (a report found in free text)
 * > synthesized (built from the exit status, the diff and the last log lines). Unlike the reference, an agent report
 * that is refused (unknown version, malformed, too large) is never dropped silently: the refusal is returned so the
 * result says so and a high finding is added, then the next tier is tried.
 */
export interface ProcessOutcome {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The process never started, or the orchestration failed before it could. */
  spawnError?: string;
  /** The stream declared a failure the exit code hides (claude is_error…). */
  nativeFailure?: string;
}

export interface ResolveReportInput {
  taskId: string;
  tier: ReportTier;
  /**
   * The task ran with a return channel. A valid report.json counts as source `channel` only when the channel's
   * marker (paths.channelReport) vouches for those exact bytes: a report the agent wrote itself stays `file`.
   */
  channel: boolean;
  paths: Pick<TaskPaths, 'report' | 'finalMessage' | 'rawLog'> & Partial<Pick<TaskPaths, 'channelReport'>>;
  translation: TranslationSummary;
  outcome: ProcessOutcome;
  /** Files git shows as changed, when a diff was computed. */
  diffFiles?: Array<{ path: string; action: Report['changes'][number]['action'] }>;
}

export interface ResolvedReport {
  report: Report;
  source: ReportSource;
  agent_report_valid: boolean;
  agent_report_error?: string;
  /** Findings about the report itself (refused agent report, task id mismatch). */
  findings: Finding[];
}

/** How much of the end of raw.log the degraded tier searches (reports come last; logs can be huge). */
const RAW_LOG_WINDOW = 16 * 1024 * 1024;

export async function resolveReport(input: ResolveReportInput): Promise<ResolvedReport> {
  const errors: string[] = [];
  const verdict: FileVerdict = {};
  const found = (await fromReportFile(input, errors, verdict)) ?? (await fromFinalAnswer(input, errors)) ?? (await fromRawLog(input));
  const resolved = found ?? { report: synthesize(input, await lastLogLines(input.paths.rawLog, 5)), source: 'synthesized' as const };
  const findings: Finding[] = verdict.salvaged
    ? [verdict.salvaged]
    : errors.map((error) => ({
        severity: 'high',
        title: 'Agent report refused',
        detail: `${error} The next report tier was used instead (source: ${resolved.source}).`,
      }));
  let report = keepAgentsWord(resolved.report, resolved.source, verdict, findings);
  if (report.task_id && report.task_id !== input.taskId) {
    findings.push({
      severity: 'medium',
      title: 'Report names another task',
      detail: `The report declares task_id "${report.task_id}", but this task is "${input.taskId}". It was kept, and may be stale or copied.`,
    });
  } else if (!report.task_id) {
    report = { ...report, task_id: input.taskId };
  }
  return {
    report,
    source: resolved.source,
    agent_report_valid: resolved.source !== 'synthesized' && errors.length === 0,
    ...(errors.length ? { agent_report_error: errors.join(' ') } : {}),
    findings,
  };
}

/** How good a verdict is: a later tier may confirm or lower the agent's, never raise it. */
const STATUS_RANK: Record<ReportStatus, number> = { failed: 0, blocked: 0, partial: 1, success: 2 };

/** What became of a report.json that was there but not valid as written. */
interface FileVerdict {
  /** It was rebuilt from its readable fields: the finding naming what was left out. */
  salvaged?: Finding;
  /** It was refused whole (`status`: its verdict, when still readable). */
  refused?: { status?: ReportStatus };
}

/**
 * A refused report.json never turns into a better verdict than the agent's (issue 23): a readable status is never
 * raised by a later tier (`failed` and `blocked` stay so), and with no readable status, a report synthesized from a clean exit
 * is not a success but "needs review" (status `blocked`: a person must decide; `caesar run` exits 1).
 */
function keepAgentsWord(report: Report, source: ReportSource, verdict: FileVerdict, findings: Finding[]): Report {
  const refused = verdict.refused;
  if (!refused) return report;
  const written = refused.status;
  if (written !== undefined) {
    if (STATUS_RANK[report.status] <= STATUS_RANK[written]) return report;
    findings.push({
      severity: 'high',
      title: 'Agent status kept',
      detail: `The refused report.json says "${written}"; the ${source} report said "${report.status}", which is not taken over the agent's own verdict.`,
    });
    return { ...report, status: written };
  }
  if (source !== 'synthesized' || report.status === 'failed') return report;
  findings.push({
    severity: 'high',
    title: 'Needs review',
    detail: 'The agent wrote a report.json whose status could not be read, so its verdict is unknown: review the work before applying it.',
  });
  return { ...report, status: 'blocked', summary: `Needs review: the agent's report.json could not be read (see the findings). ${report.summary}` };
}

type Found = { report: Report; source: ReportSource } | undefined;

async function fromReportFile(input: ResolveReportInput, errors: string[], verdict: FileVerdict): Promise<Found> {
  let doc: unknown;
  try {
    doc = await readReportDocument(input.paths.report, MAX_BYTES.report);
  } catch (err) {
    errors.push(`report.json was refused: ${describe(err)}.`);
    verdict.refused = {};
    return undefined;
  }
  if (doc === undefined) return undefined;
  const judged = judgeReportDocument(doc);
  if (judged.kind === 'valid') return { report: judged.report, source: (await submittedThroughChannel(input)) ? 'channel' : 'file' };
  errors.push(judged.error);
  if (judged.kind === 'salvaged') {
    verdict.salvaged = judged.finding;
    return { report: judged.report, source: 'file' };
  }
  verdict.refused = judged.status ? { status: judged.status } : {};
  return undefined;
}

/** The return channel accepted report.json as it is now: the marker's hash matches the file's bytes. */
async function submittedThroughChannel(input: ResolveReportInput): Promise<boolean> {
  if (!input.paths.channelReport) return false;
  try {
    const marker = await readJsonFile(input.paths.channelReport, ChannelReportMarkerSchema);
    if (!marker) return false;
    const bytes = await readRegularFileBounded(input.paths.report, MAX_BYTES.report);
    return createHash('sha256').update(bytes).digest('hex') === marker.sha256;
  } catch {
    return false;
  }
}

/** Tier 2: final-message.txt (written by the CLI itself) wins over the translated stdout final text and structured output. */
async function fromFinalAnswer(input: ResolveReportInput, errors: string[]): Promise<Found> {
  const source: ReportSource = input.tier === 'schema' ? 'schema' : 'extracted';
  const finalFile = await readTextBounded(input.paths.finalMessage, MAX_BYTES.report);
  const candidates: unknown[] = [finalFile, input.translation.structuredOutput, input.translation.finalText];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === null) continue;
    if (typeof candidate === 'string') {
      if (!candidate.trim()) continue;
      const report = reportFromText(candidate, input.tier === 'schema' ? errors : undefined);
      if (report) return { report, source };
    } else {
      try {
        return { report: parseReport(candidate), source };
      } catch (err) {
        if (input.tier === 'schema') errors.push(`The structured final answer was refused: ${describe(err)}.`);
      }
    }
  }
  return undefined;
}

async function fromRawLog(input: ResolveReportInput): Promise<Found> {
  const text = await readTail(input.paths.rawLog, RAW_LOG_WINDOW);
  const report = text ? extractReport(text) : undefined;
  return report ? { report, source: 'extracted' } : undefined;
}

/** A text that is a whole report (the schema tier's final answer), or one found inside it. */
function reportFromText(text: string, errors?: string[]): Report | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      return parseReport(JSON.parse(trimmed));
    } catch (err) {
      if (err instanceof UnsupportedVersionError || (err instanceof ProtocolError && trimmed.includes(DOCUMENT_IDS.report))) {
        errors?.push(`The final answer was refused: ${describe(err)}.`);
      }
    }
  }
  return extractReport(text);
}

/** Attempts per marker occurrence, so a log full of braces cannot make extraction quadratic. */
const MAX_STARTS_PER_MARKER = 64;

/**
 * Finds a caesar.report/v1 inside free text (reference §1.8): fenced ```json / caesar:report blocks whose body holds
 * the marker, and raw JSON objects around each marker occurrence (every `{` before it, nearest first, read with a
 * brace-balanced scan that understands strings and escapes). The LAST valid report in the text wins, so an agent
 * that corrects itself has the last word. Nulls are dropped before validation.
 */
export function extractReport(text: string): Report | undefined {
  const candidates: Array<{ end: number; json: string }> = [];
  const fence = /```[ \t]*(?:json)?[ \t]*(?:caesar:report)?[ \t]*\r?\n([\s\S]*?)```/g;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const body = m[1] ?? '';
    if (body.includes(DOCUMENT_IDS.report)) candidates.push({ end: m.index + m[0].length, json: body });
  }
  for (let at = text.indexOf(DOCUMENT_IDS.report); at >= 0; at = text.indexOf(DOCUMENT_IDS.report, at + 1)) {
    let start = text.lastIndexOf('{', at);
    for (let tries = 0; start >= 0 && tries < MAX_STARTS_PER_MARKER; tries++, start = start > 0 ? text.lastIndexOf('{', start - 1) : -1) {
      const end = scanObject(text, start);
      if (end === undefined || end < at) continue;
      const json = text.slice(start, end + 1);
      if (validReport(json)) {
        candidates.push({ end: end + 1, json });
        break;
      }
    }
  }
  candidates.sort((a, b) => a.end - b.end);
  for (let i = candidates.length - 1; i >= 0; i--) {
    const report = validReport(candidates[i]!.json);
    if (report) return report;
  }
  return undefined;
}

function validReport(json: string): Report | undefined {
  if (json.length > MAX_BYTES.report) return undefined;
  try {
    return parseReport(JSON.parse(json));
  } catch {
    return undefined;
  }
}

/** Index of the `}` closing the object that opens at `start`, or undefined when the text ends first. */
export function scanObject(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  const limit = Math.min(text.length, start + MAX_BYTES.report);
  for (let i = start; i < limit; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return undefined;
}

/** Tier 4 (reference §2.8.5): status from the process outcome and the diff, summary from the final text or the log. */
export function synthesize(input: Pick<ResolveReportInput, 'taskId' | 'translation' | 'outcome' | 'diffFiles'>, lastLines: string[]): Report {
  const { outcome } = input;
  const failed = outcome.timedOut || outcome.cancelled || outcome.spawnError !== undefined || outcome.exitCode !== 0 || outcome.nativeFailure !== undefined;
  const status = failed ? 'failed' : input.diffFiles?.length ? 'partial' : 'success';
  const finalText = input.translation.finalText?.trim();
  const why = outcome.cancelled
    ? 'The task was cancelled.'
    : outcome.timedOut
      ? 'The task exceeded its deadline.'
      : outcome.spawnError
        ? outcome.spawnError
        : outcome.nativeFailure
          ? `The agent reported a failure: ${outcome.nativeFailure}`
          : undefined;
  let summary: string;
  if (finalText) summary = clamp(finalText, 2000);
  // The translator understood the agent's own failure: its words say it all; raw stream lines would only bury them.
  else if (outcome.nativeFailure !== undefined) summary = '';
  else if (lastLines.length) summary = `No report received; last log lines: ${lastLines.map((l) => clamp(l, 300)).join(' | ')}`;
  else summary = 'No report received and the agent printed nothing usable.';
  if (why) summary = summary ? `${why} ${summary}` : why;
  return parseReport({
    protocol: DOCUMENT_IDS.report,
    task_id: input.taskId,
    status,
    summary,
    changes: (input.diffFiles ?? []).map((f) => ({ path: f.path, action: f.action })),
  });
}

function clamp(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function describe(err: unknown): string {
  return (err as Error)?.message?.replace(/\.$/, '') ?? String(err);
}

async function readTextBounded(file: string, maxBytes: number): Promise<string | undefined> {
  try {
    // The agent can plant anything at these paths: regular files only, bounded, never blocking on a FIFO.
    return (await readRegularFileBounded(file, maxBytes)).toString('utf8');
  } catch {
    return undefined;
  }
}

async function readTail(file: string, window: number): Promise<string | undefined> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await openRegularFile(file);
    const { size } = await handle.stat();
    const length = Math.min(size, window);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

export async function lastLogLines(file: string, count: number): Promise<string[]> {
  const text = await readTail(file, 64 * 1024);
  if (!text) return [];
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-count);
}
