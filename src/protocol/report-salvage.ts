import { DOCUMENT_IDS } from './version';
import { MAX_REPORT_DEPTH, ReportSchema, ReportStatusSchema, ReportTooDeepError, dropNulls, type Report, type ReportStatus } from './report';

/**
 * What can still be read of an agent report that failed validation. The agent's verdict matters more than any other
 * field: a `failed` or `blocked` report with one malformed token count must still say "do not apply". So the status
 * is read on its own, and every other top-level field is kept when it validates alone (arrays element by element);
 * whatever does not is dropped and named.
 */
export interface SalvagedReport {
  /** The report rebuilt from the readable fields; absent when no status can be read. */
  report?: Report;
  /** The status the agent wrote, when it can be read. */
  status?: ReportStatus;
  /** The fields (dotted paths, `findings.2`) that were unreadable and left out. */
  dropped: string[];
}

/** Top-level report fields rebuilt by hand rather than validated as they are. */
const REBUILT = new Set(['protocol', 'status', 'summary', 'task_id']);

export function salvageReport(doc: unknown): SalvagedReport {
  if (!isObject(doc)) return { dropped: ['(document)'] };
  const dropped: string[] = [];
  const cleaned = withoutNulls(doc, dropped);
  const status = readStatus(cleaned.status);
  if (!status) dropped.push('status');
  const summary = typeof cleaned.summary === 'string' && cleaned.summary.trim() ? cleaned.summary : undefined;
  if (!summary) dropped.push('summary');
  if (cleaned.protocol !== DOCUMENT_IDS.report) dropped.push('protocol');
  if (!status) return { dropped };
  const kept: Record<string, unknown> = {};
  const shape = ReportSchema.shape as Record<string, { safeParse(value: unknown): { success: boolean; data?: unknown } }>;
  for (const [key, value] of Object.entries(cleaned)) {
    if (REBUILT.has(key) || !(key in shape)) continue;
    const whole = shape[key]!.safeParse(value);
    if (whole.success) kept[key] = whole.data;
    else {
      // A list field keeps its valid elements; anything else (a list where a text belongs, too) is dropped whole.
      const elements = Array.isArray(value) ? keepValidElements(key, value, dropped) : undefined;
      if (elements) kept[key] = elements;
      else dropped.push(key);
    }
  }
  const report = ReportSchema.parse({
    ...kept,
    protocol: DOCUMENT_IDS.report,
    task_id: typeof cleaned.task_id === 'string' ? cleaned.task_id : '',
    status,
    summary: summary ?? `The agent reported "${status}"; its summary could not be read.`,
  });
  return { report, status, dropped };
}

/** The document's fields without nulls; a field nesting past MAX_REPORT_DEPTH is left out and named in `dropped`. */
function withoutNulls(doc: Record<string, unknown>, dropped: string[]): Record<string, unknown> {
  const cleaned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    try {
      if (value !== null) cleaned[key] = dropNulls(value, 1);
    } catch (err) {
      if (!(err instanceof ReportTooDeepError)) throw err;
      dropped.push(`${key} (nested deeper than ${MAX_REPORT_DEPTH} levels)`);
    }
  }
  return cleaned;
}

/**
 * The status as the agent wrote it, forgiving case and surrounding blanks ("Failed", " blocked "): the point is to
 * keep its verdict, not to grade its spelling. Anything else is unreadable.
 */
function readStatus(value: unknown): ReportStatus | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = ReportStatusSchema.safeParse(value.trim().toLowerCase());
  return parsed.success ? parsed.data : undefined;
}

/** The valid elements of a list field, each invalid one named; undefined when the field is not a list. */
function keepValidElements(key: string, values: unknown[], dropped: string[]): unknown[] | undefined {
  const element = (ReportSchema.shape as Record<string, unknown>)[key] as { unwrap?: () => { element?: { safeParse(v: unknown): { success: boolean; data?: unknown } } } };
  const schema = element.unwrap?.().element;
  if (!schema) return undefined;
  const kept: unknown[] = [];
  values.forEach((value, index) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) kept.push(parsed.data);
    else dropped.push(`${key}.${index}`);
  });
  return kept;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
