import { realpathSync, type promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import type { EventDraft } from '../../protocol';
import { BeneathError, openBeneath, type OpenedBeneath } from './beneath';
import { isInside } from './permissions';

/** A text file larger than this is not served to the agent (it can read it from disk itself if it must). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export interface WorkspaceFsOptions {
  /** The task's workspace (its worktree or the user's checkout), absolute. Reads and writes stay inside it. */
  workspace: string;
  mode: 'read-only' | 'write';
  /** Files outside the workspace the agent may also read and write, exactly (the report file of the task). */
  extraFiles?: string[];
  /** Paths `[sandbox] hide` hides (absolute): refused, and everything below them, however reached. */
  hidden?: string[];
  /** Each write, as it happens (file_changed, or progress for an extra file). */
  emit(drafts: EventDraft[]): void;
  /** Told of each workspace path written (relative, `/`-separated). */
  onWritten?(rel: string): void;
}

/**
 * The client side of ACP's `fs/read_text_file` and `fs/write_text_file`: served inside the task's workspace only.
 * Refused: a path with a `..` segment, a path outside the workspace, a symlink (file or folder) leading out of it or
 * into `.git/`, anything under `.git/`, and any write in a read-only task. Every component is resolved below the
 * workspace's own descriptor (beneath.ts), so no race between a check and the open can lead a request out. A missing file is `resourceNotFound`, as ACP asks.
 */
export class WorkspaceFs {
  constructor(private readonly options: WorkspaceFsOptions) {}

  async read(params: { path: string; line?: number | null; limit?: number | null }): Promise<{ content: string }> {
    const file = this.checkPath(params.path, 'read');
    const opened = await this.open(file, params.path, 'read');
    let buffer: Buffer;
    try {
      buffer = await readBounded(opened.handle, params.path);
    } finally {
      await opened.handle.close();
    }
    return { content: sliceLines(buffer.toString('utf8'), params.line ?? undefined, params.limit ?? undefined) };
  }

  async write(params: { path: string; content: string }): Promise<Record<string, never>> {
    const file = this.checkPath(params.path, 'write');
    const extra = this.isExtra(file);
    if (this.options.mode === 'read-only' && !extra) throw refused(`${params.path}: this task is read-only, no file may be written`);
    const { handle, rel, created } = await this.open(file, params.path, 'write');
    try {
      // Truncated only now, through the descriptor checked to be a regular file below the workspace.
      await handle.truncate(0);
      await handle.writeFile(params.content, 'utf8');
    } finally {
      await handle.close();
    }
    if (extra) {
      this.options.emit([{ type: 'progress', message: `The agent wrote ${file} through the client.` }]);
      return {};
    }
    this.options.onWritten?.(rel);
    this.options.emit([{ type: 'file_changed', path: rel, action: created ? 'created' : 'modified' }]);
    return {};
  }

  /** The requested path, absolute, checked lexically: no `..`, inside the workspace (or an extra file), not in .git. */
  private checkPath(requested: string, verb: 'read' | 'write'): string {
    if (typeof requested !== 'string' || !requested || requested.includes('\0')) throw refused('no valid path given');
    if (requested.split(/[\\/]/).includes('..')) throw refused(`${requested}: a path with ".." is not served`);
    const file = path.resolve(this.options.workspace, requested);
    if (this.isExtra(file)) return file;
    if (!isInside(file, this.options.workspace)) throw refused(`${requested} is outside the task's workspace (${this.options.workspace}); ${verb} refused`);
    const rel = path.relative(this.options.workspace, file);
    if (rel === '' ) throw refused(`${requested} is the workspace itself, not a file`);
    if (rel.split(path.sep)[0] === '.git') throw refused(`${requested} is inside .git/; ${verb} refused`);
    return file;
  }

  /**
   * Opens the file through openBeneath (beneath.ts): every component below the workspace, none followed out of it, so
   * a folder swapped for a symlink while the request runs cannot lead it elsewhere. An extra file is opened in its own
   * folder, no symlink followed at all. A symlink inside the workspace is followed; one into .git/ is refused.
   */
  private async open(file: string, requested: string, access: 'read' | 'write'): Promise<OpenedBeneath> {
    const [root, rel] = this.isExtra(file)
      ? [path.dirname(file), path.basename(file)]
      : [this.options.workspace, path.relative(this.options.workspace, file).split(path.sep).join('/')];
    try {
      return await openBeneath(root, rel, {
        access,
        followInside: !this.isExtra(file),
        refuse: (reached) => this.refusal(root, reached, requested, access),
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw RequestError.resourceNotFound(requested);
      if (err instanceof BeneathError) throw refused(`${requested}: ${err.message}; ${access} refused`);
      throw err;
    }
  }

  /** Why a place the walk reached (relative to `root`) is not served: inside .git/, or hidden by [sandbox] hide. */
  private refusal(root: string, reached: string, requested: string, access: string): string | undefined {
    if (root === this.options.workspace && reached.split('/')[0] === '.git') return `${requested} leads into .git/; ${access} refused`;
    const places = [root, realOrSelf(root)].map((base) => path.join(base, ...reached.split('/')));
    const hidden = (this.options.hidden ?? []).flatMap((p) => [p, realOrSelf(p)]);
    if (places.some((place) => hidden.some((h) => isInside(place, h)))) return `${requested} is hidden by [sandbox] hide; ${access} refused`;
    return undefined;
  }

  private isExtra(file: string): boolean {
    return (this.options.extraFiles ?? []).some((extra) => path.resolve(extra) === file);
  }
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** ACP's `line` (1-based first line) and `limit` (number of lines) applied to a text. */
export function sliceLines(text: string, line?: number, limit?: number): string {
  if (line === undefined && limit === undefined) return text;
  const lines = text.split('\n');
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit === undefined ? lines.length : start + Math.max(0, limit);
  return lines.slice(start, end).join('\n');
}

/** The whole file from an open descriptor, refused past MAX_READ_BYTES (a file growing meanwhile included). */
async function readBounded(handle: fs.FileHandle, requested: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for (;;) {
    const chunk = Buffer.alloc(Math.min(1 << 20, MAX_READ_BYTES + 1 - length));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
    if (bytesRead === 0) return Buffer.concat(chunks, length);
    chunks.push(chunk.subarray(0, bytesRead));
    length += bytesRead;
    if (length > MAX_READ_BYTES) throw refused(`${requested} is larger than ${MAX_READ_BYTES} bytes; read refused`);
  }
}

function refused(message: string): RequestError {
  return RequestError.invalidParams({ reason: message }, message);
}
