import * as vscode from 'vscode';
import { RecordRefused, readBaseVersion } from '../../engine/tasks';

export const BASE_SCHEME = 'caesar-base';

/** Shown instead of running git when the workspace is not trusted: a cloned repository's records name its fields. */
export const UNTRUSTED_REVIEW =
  'This workspace is not trusted. Task records in it may come from a cloned repository, so Caesar runs no git and ' +
  "opens no file on a record's say-so here. Trust the workspace (Workspaces: Manage Workspace Trust) to review this task's changes.";

/** What a `caesar-base:` URI names: a file of a task as it was at the task's base commit, in a caesar root. */
export interface BaseVersionRef {
  taskId: string;
  /** The task's base commit (full hex; checked again before git sees it). */
  commit: string;
  /** The caesar root whose repository holds the commit. */
  root: string;
  /** Repository-relative path with '/' separators. */
  file: string;
}

/**
 * `caesar-base:<path>?{"task":…,"commit":…,"root":…,"file":…}`: everything the provider needs is in the query (as the
 * GitHub Pull Requests extension's review URIs carry theirs), so a diff editor restored after a window reload shows its
 * left side before the task list has loaded. The path is only for the editor: the file's name picks the language, and
 * `beside` (the path of the task's version, the diff's right side) gives both sides one path, as Source Control's
 * `git:` URIs share the file's: the multi-file diff editor marks a file "R" (renamed) when its two sides' paths differ.
 */
export function baseVersionUri(ref: BaseVersionRef, beside?: vscode.Uri): vscode.Uri {
  return vscode.Uri.from({
    scheme: BASE_SCHEME,
    path: beside?.path ?? `/${ref.file}`,
    query: JSON.stringify({ task: ref.taskId, commit: ref.commit, root: ref.root, file: ref.file }),
  });
}

export function parseBaseVersionUri(uri: vscode.Uri): BaseVersionRef | undefined {
  if (uri.scheme !== BASE_SCHEME) return undefined;
  let query: unknown;
  try {
    query = JSON.parse(uri.query);
  } catch {
    return undefined;
  }
  if (!query || typeof query !== 'object') return undefined;
  const { task, commit, root, file } = query as Record<string, unknown>;
  if (typeof task !== 'string' || typeof commit !== 'string' || typeof root !== 'string') return undefined;
  if (file !== undefined && typeof file !== 'string') return undefined;
  // Without `file`: a URI of an earlier version (a diff editor restored after an update), whose path is the file.
  return { taskId: task, commit, root, file: file ?? uri.path.replace(/^\//, '') };
}

/**
 * Serves the left side of a task's diffs: the file at the task's base commit, read from the root's repository by the
 * engine (engine/git/record-checks → engine/git/git: neutral config, `--end-of-options`, `cat-file blob` of a validated
 * full-hex commit and a normalized relative path). Only the roots of this window's folders are read, and nothing
 * runs in an untrusted workspace. A file the task created has no base: it is served empty.
 */
export class BaseVersionProvider implements vscode.TextDocumentContentProvider {
  constructor(
    /** The caesar roots of the window's folders, read at each request (folders come and go). */
    private readonly roots: () => readonly string[],
    private readonly isTrusted: () => boolean = () => vscode.workspace.isTrusted,
  ) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseBaseVersionUri(uri);
    if (!ref) return `Caesar: ${uri.toString()} does not name a task's base version.`;
    if (!this.isTrusted()) return UNTRUSTED_REVIEW;
    if (!this.roots().includes(ref.root)) return `Caesar: ${ref.root} is not a folder of this window; its files are not read.`;
    try {
      // undefined: not in the base, the task created it.
      return (await readBaseVersion(ref.root, { base_ref: ref.commit }, ref.file))?.toString('utf8') ?? '';
    } catch (err) {
      if (err instanceof RecordRefused) return `Caesar refused this task record: ${err.message}`;
      return '';
    }
  }
}
