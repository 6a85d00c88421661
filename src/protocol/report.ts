import { z } from './zod';
import { ProtocolError, formatIssues, parseJsonBounded, MAX_BYTES } from './errors';
import { DOCUMENT_IDS, assertKnownVersion } from './version';

export const ReportStatusSchema = z.enum(['success', 'partial', 'failed', 'blocked']);
export type ReportStatus = z.infer<typeof ReportStatusSchema>;

export const ChangeActionSchema = z.enum(['created', 'modified', 'deleted', 'renamed']);
export type ChangeAction = z.infer<typeof ChangeActionSchema>;

export const SeveritySchema = z.enum(['info', 'low', 'medium', 'high', 'critical']);
export type Severity = z.infer<typeof SeveritySchema>;

export const ChangeSchema = z.object({
  path: z.string().min(1),
  action: ChangeActionSchema,
  summary: z.string().default(''),
});
export type Change = z.infer<typeof ChangeSchema>;

export const CommandRunSchema = z.object({
  command: z.string(),
  exit_code: z.number().int().nullable().optional(),
  note: z.string().default(''),
});

export const FindingSchema = z.object({
  severity: SeveritySchema,
  title: z.string().min(1),
  file: z.string().optional(),
  line: z.number().int().positive().optional(),
  detail: z.string().default(''),
});
export type Finding = z.infer<typeof FindingSchema>;

export const ReportQuestionSchema = z.object({
  id: z.string().min(1),
  question: z.string().min(1),
  options: z.array(z.string()).default([]),
});

export const ArtifactSchema = z.object({
  path: z.string().min(1),
  description: z.string().default(''),
});

export const UsageSchema = z.object({
  input_tokens: z.number().int().nonnegative().optional(),
  output_tokens: z.number().int().nonnegative().optional(),
  duration_ms: z.number().int().nonnegative().optional(),
  cost_usd: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** caesar.report/v1 — only protocol, status and summary are required; a minimal report is valid. */
export const ReportSchema = z.object({
  protocol: z.literal(DOCUMENT_IDS.report),
  task_id: z.string().default(''),
  status: ReportStatusSchema,
  summary: z.string().min(1),
  details: z.string().default(''),
  changes: z.array(ChangeSchema).default([]),
  commands_run: z.array(CommandRunSchema).default([]),
  findings: z.array(FindingSchema).default([]),
  questions: z.array(ReportQuestionSchema).default([]),
  next_steps: z.array(z.string()).default([]),
  artifacts: z.array(ArtifactSchema).default([]),
  usage: UsageSchema.optional(),
});

export type Report = z.infer<typeof ReportSchema>;
export type ReportInput = z.input<typeof ReportSchema>;

/**
 * How deeply a report may nest. Its schema goes 3 levels down (a finding's field); past this a document is refused,
 * never walked: an agent's `[[[[…]]]]` 100,000 levels deep overflowed the stack of the walk below and failed the
 * task's conclusion without a word (issue 34).
 */
export const MAX_REPORT_DEPTH = 32;

/** A report (or one of its fields) nests deeper than MAX_REPORT_DEPTH. */
export class ReportTooDeepError extends ProtocolError {
  constructor() {
    super(`the document nests deeper than ${MAX_REPORT_DEPTH} levels`);
  }
}

/**
 * Removes object keys whose value is null, recursively; nulls inside arrays are kept. Agents (and strict structured
 * outputs, where optional fields are nullable) write `"usage": null` or `"line": null`, which means "absent".
 * `depth` is the value's own depth in the document; deeper than MAX_REPORT_DEPTH throws ReportTooDeepError.
 */
export function dropNulls(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_REPORT_DEPTH) throw new ReportTooDeepError();
  if (Array.isArray(value)) return value.map((inner: unknown) => dropNulls(inner, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (inner !== null) out[key] = dropNulls(inner, depth + 1);
  }
  return out;
}

/** Validates an already-parsed report after null-dropping. Refuses unknown versions by name. */
export function parseReport(doc: unknown): Report {
  assertKnownVersion('report', doc);
  const result = ReportSchema.safeParse(dropNulls(doc));
  if (!result.success) throw new ProtocolError('Invalid report', formatIssues(result.error));
  return result.data;
}

/** Reads report.json text: bounded size, valid JSON, known version, valid fields. */
export function readReportText(text: string): Report {
  return parseReport(parseJsonBounded(text, 'report.json', MAX_BYTES.report));
}
