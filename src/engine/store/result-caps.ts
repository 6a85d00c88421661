import type { Finding, Report, ResultDoc } from '../../protocol';

/**
 * result.json stays small whatever the change's size (issue 23: 50,000 new files made a 23 MB result that no reader
 * could load, and `caesar run` printed only "succeeded"). Lists beyond these lengths are cut, and the document says
 * how long they were (`*_total`), so a reader can say "and N more"; the diff itself is always whole in git.
 */
export const MAX_LISTED_FILES = 1000;
export const MAX_LISTED_FINDINGS = 1000;
/** Findings of one kind that reconciliation writes per file (undeclared, declared but absent): past this, one summary. */
export const MAX_FINDINGS_PER_KIND = 100;

/** The result with its lists cut to their caps and their full lengths noted; unchanged when nothing is long. */
export function capResultLists(result: ResultDoc): ResultDoc {
  const { report } = result;
  const capped: ResultDoc = { ...result, report: capReportLists(report) };
  if (report.changes.length > MAX_LISTED_FILES) capped.changes_total = report.changes.length;
  if (report.findings.length > MAX_LISTED_FINDINGS) capped.findings_total = report.findings.length;
  if (result.diff && result.diff.files.length > MAX_LISTED_FILES) {
    capped.diff = { ...result.diff, files: result.diff.files.slice(0, MAX_LISTED_FILES), files_total: result.diff.files.length };
  }
  return capped;
}

function capReportLists(report: Report): Report {
  if (report.changes.length <= MAX_LISTED_FILES && report.findings.length <= MAX_LISTED_FINDINGS) return report;
  return { ...report, changes: report.changes.slice(0, MAX_LISTED_FILES), findings: capFindings(report.findings) };
}

/**
 * At most MAX_LISTED_FINDINGS, in their order, the high and critical ones kept first: Caesar's own verdicts (a write
 * in a read-only task, files written in the checkout) come after the agent's findings and must never be the ones cut.
 */
function capFindings(findings: readonly Finding[]): Finding[] {
  if (findings.length <= MAX_LISTED_FINDINGS) return [...findings];
  const kept = new Set(findings.filter((f) => f.severity === 'high' || f.severity === 'critical').slice(0, MAX_LISTED_FINDINGS));
  for (const finding of findings) {
    if (kept.size >= MAX_LISTED_FINDINGS) break;
    kept.add(finding);
  }
  return findings.filter((f) => kept.has(f));
}

/**
 * Per-file findings of one kind beyond MAX_FINDINGS_PER_KIND become one finding that counts the rest, so that the
 * agent's own findings and the high ones are never pushed out of the capped list by thousands of "Undeclared change".
 */
export function summarizePerFileFindings(findings: Finding[], title: string, what: string): Finding[] {
  if (findings.length <= MAX_FINDINGS_PER_KIND) return findings;
  const rest = findings.length - MAX_FINDINGS_PER_KIND;
  const severity = findings[0]?.severity ?? 'medium';
  return [
    ...findings.slice(0, MAX_FINDINGS_PER_KIND),
    { severity, title, detail: `… and ${rest.toLocaleString('en-US')} more ${what} (${findings.length.toLocaleString('en-US')} in all).` },
  ];
}

/** "a, b, c and N more": a list of names cut for a message. */
export function listWithMore(names: readonly string[], max = 20): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${(names.length - max).toLocaleString('en-US')} more`;
}
