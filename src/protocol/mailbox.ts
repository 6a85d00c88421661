import { z } from './zod';

/**
 * The return channel's mailbox (OACP "The return channel"): a question is `questions/<id>.json`, written by the
 * asking side; its answer is `answers/<id>.json`, written once by whoever answers first. Both are plain files so
 * that any process — the CLI, the MCP server, the extension — can answer.
 */
export const QuestionFileSchema = z.object({
  id: z.string().min(1),
  question: z.string().min(1),
  options: z.array(z.string()).default([]),
  asked_at: z.string(),
  /** Set by the asker when it stopped waiting; an expired question can no longer be answered. */
  expired_at: z.string().optional(),
});
export type QuestionFile = z.infer<typeof QuestionFileSchema>;

/** The id prefix of the questions a supervisor files for an ACP agent's permission requests. */
export const PERMISSION_QUESTION_PREFIX = 'perm_';

export const AnswerFileSchema = z.object({
  id: z.string().min(1),
  answer: z.string(),
  answered_at: z.string(),
  /** Who answered ("cli", "vscode", "mcp"…), for the timeline. */
  by: z.string().optional(),
});
export type AnswerFile = z.infer<typeof AnswerFileSchema>;

/**
 * `progress/<name>.json`: a progress report filed by the return channel's `report_progress`. The channel never writes
 * events.jsonl (its single writer is the supervisor): the supervisor relays each file once as a `progress` event.
 * Names sort in filing order (a millisecond timestamp, then a random suffix).
 */
export const ProgressFileSchema = z.object({
  message: z.string().min(1),
  pct: z.number().min(0).max(100).optional(),
  at: z.string(),
});
export type ProgressFile = z.infer<typeof ProgressFileSchema>;

/** Beside report.json when the return channel accepted it: the hash ties the marker to those exact bytes. */
export const ChannelReportMarkerSchema = z.object({
  sha256: z.string().min(1),
  submitted_at: z.string(),
});
export type ChannelReportMarker = z.infer<typeof ChannelReportMarkerSchema>;

/**
 * `questions/.closed.json`: written once by the supervisor when its agent has ended. Every question still without an
 * answer is expired from that moment (answering fails, none is pending), without rewriting each question file: with
 * 10,000 pending questions that rewrite alone outlasted the conclusion's budget (issue 23). A dotfile, so listings
 * of the mailbox never take it for a question.
 */
export const QUESTIONS_CLOSED_FILE = '.closed.json';
export const QuestionsClosedSchema = z.object({ closed_at: z.string() });
