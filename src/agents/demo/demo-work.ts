/**
 * What the demo agent does, shared by its two modes (stream: ./demo-agent.ts, ACP: ./acp-mode.ts) and kept free of
 * I/O so it can be tested alone: which file it edits, the text it writes there (valid for the file's language), the
 * question it asks, and whether its test-only fault modes are on. Only node:* may be imported here: the stream mode is
 * dependency-free on purpose.
 */

/** The fields of task.json (caesar.task/v1) the demo agent reads, in either mode. */
export interface Task {
  id: string;
  objective: string;
  context?: string;
  mode: 'read-only' | 'write';
  workspace: string;
  report_path: string;
  deadline_ms: number;
  created_at: string;
}

/**
 * The fault modes ("crash" in the objective: exit mid-turn; "escape": try a write outside the workspace) exist for
 * the engine's tests. They are off unless CAESAR_DEMO_FAULTS=1, so a user's objective that merely says "crash" or
 * "escape" gets an ordinary run.
 */
export function faultsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CAESAR_DEMO_FAULTS === '1';
}

const FILE_NAME = /(?:^|[\s`'"(])([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:md|txt|json|tsx?|jsx?|mjs|cjs|py|rs|go|java|c|h|cpp|rb|sh|html|xml|css|scss|toml|yaml|yml))\b/;

/** The first line of what a follow-up's context says the continued task's objective was (continue-task.ts). */
const PREVIOUS_OBJECTIVE = /The objective of task \S+ was:\n([^\n]*)/;

/**
 * The file to edit: one named in the objective (e.g. "write NOTES.md"); for a follow-up whose feedback names none,
 * the one the continued task's objective named (the work to revise is there); else CAESAR_DEMO.md. A bare name
 * only (no separators): never outside the workspace.
 */
export function targetFile(objective: string, context = ''): string {
  return FILE_NAME.exec(objective)?.[1] ?? FILE_NAME.exec(previousObjective(context) ?? '')?.[1] ?? 'CAESAR_DEMO.md';
}

/** The continued task's objective (first line) when this task is a follow-up, else undefined. */
export function previousObjective(context = ''): string | undefined {
  return PREVIOUS_OBJECTIVE.exec(context)?.[1]?.trim() || undefined;
}

/** The first line of an objective, as the demo quotes it. */
export function firstLine(text: string): string {
  return text.split('\n')[0]!.trim().slice(0, 200);
}

type Syntax = { kind: 'markdown' } | { kind: 'plain' } | { kind: 'json' } | { kind: 'comment'; open: string; close: string };

const LINE_COMMENT: Record<string, string> = {
  '//': 'ts tsx js jsx mjs cjs rs go java c h cpp',
  '#': 'py rb sh toml yaml yml',
};

/** How a line of prose is written validly in a file of this name. */
export function syntaxOf(file: string): Syntax {
  const ext = /\.([^.]+)$/.exec(file)?.[1]?.toLowerCase() ?? '';
  if (ext === 'md') return { kind: 'markdown' };
  if (ext === 'json') return { kind: 'json' };
  for (const [open, exts] of Object.entries(LINE_COMMENT)) if (exts.split(' ').includes(ext)) return { kind: 'comment', open, close: '' };
  if (ext === 'html' || ext === 'xml') return { kind: 'comment', open: '<!--', close: '-->' };
  if (ext === 'css' || ext === 'scss') return { kind: 'comment', open: '/*', close: '*/' };
  return { kind: 'plain' };
}

const HEADER = 'Written by the Caesar demo agent';

/** A note on one line, unable to end the comment it sits in early. */
function sanitize(note: string): string {
  return note.replace(/\s+/g, ' ').replace(/\*\//g, '* /').replace(/-->/g, '-- >').trim();
}

function formatLine(syntax: Syntax, note: string): string {
  if (syntax.kind === 'markdown') return `- ${note}`;
  if (syntax.kind === 'comment') return `${syntax.open} ${note}${syntax.close ? ` ${syntax.close}` : ''}`;
  return note;
}

/**
 * The file's new text with the demo's note in it, or undefined when no valid edit exists (a JSON file that is not an
 * object). A new file gets a header line; an existing one gets the note appended — or, for a follow-up, the line that
 * carried the previous note (`replacing`) rewritten in place, so the feedback revises the work instead of adding to it.
 */
export function editedText(file: string, oldText: string | null, rawNote: string, replacing?: string): string | undefined {
  const syntax = syntaxOf(file);
  const note = sanitize(rawNote);
  if (syntax.kind === 'json') return editedJson(oldText, note);
  const line = formatLine(syntax, note);
  if (oldText === null) return `${syntax.kind === 'markdown' ? `# ${HEADER}` : formatLine(syntax, HEADER)}\n\n${line}\n`;
  const lines = oldText.split('\n');
  const old = replacing ? sanitize(replacing) : '';
  const at = old ? lines.map((l) => l.includes(old)).lastIndexOf(true) : -1;
  if (at >= 0) {
    lines[at] = line;
    return lines.join('\n');
  }
  return `${oldText}${oldText === '' || oldText.endsWith('\n') ? '' : '\n'}${line}\n`;
}

function editedJson(oldText: string | null, note: string): string | undefined {
  let value: unknown = {};
  if (oldText !== null) {
    try {
      value = JSON.parse(oldText);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return `${JSON.stringify({ ...value, caesar_demo: `${HEADER}: ${note}` }, null, 2)}\n`;
}

/** The note the demo writes: the objective (a follow-up's feedback) and the answer it got, if any. */
export function noteFor(task: Pick<Task, 'objective' | 'context'>, answer?: string): string {
  const previous = previousObjective(task.context);
  const body = previous ? `${previous} (revised: ${firstLine(task.objective)})` : firstLine(task.objective);
  return `${body}${answer ? ` (answer: ${answer})` : ''}`;
}

export interface DemoQuestion {
  question: string;
  options: string[];
}

/** A question that fits the objective: the greeting to use when it asks for one, else how to go about the edit. */
export function questionFor(task: Pick<Task, 'objective' | 'context' | 'mode'>): DemoQuestion {
  if (/greet|hello|welcome/i.test(task.objective)) return { question: 'Which greeting should the demo write?', options: ['Hello', 'Bonjour', 'Ciao'] };
  if (task.mode === 'read-only') return { question: 'Should I look at the top level of the workspace only, or at everything?', options: ['Top level', 'Everything'] };
  const file = targetFile(task.objective, task.context);
  return { question: `For "${firstLine(task.objective).slice(0, 80)}": should the note I add to ${file} be brief or detailed?`, options: ['Brief', 'Detailed'] };
}
