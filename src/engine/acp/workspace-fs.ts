import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import type { EventDraft } from '../../protocol';
import { UnsafeFileError, readRegularFileBounded } from '../../base/safe-read';
import { isInside } from './permissions';

/** A text file larger than this is not served to the agent (it can read it from disk itself if it must). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export interface WorkspaceFsOptions {
  /** The task's workspace (its worktree or the user's checkout), absolute. Reads and writes stay inside it. */
  workspace: string;
  mode: 'read-only' | 'write';
  /** Files outside the workspace the agent may also read and write, exactly (the report file of the task). */
  extraFiles?: string[];
  /** Each write, as it happens (file_changed, or progress for an extra file). */
  emit(drafts: EventDraft[]): void;
  /** Told of each workspace path written (relative, `/`-separated). */
  onWritten?(rel: string): void;
}

/**
 * The client side of ACP's `fs/read_text_file` and `fs/write_text_file`: served inside the task's workspace only.
 * Refused: a path with a `..` segment, a path outside the workspace, a symlink (file or folder) leading out of it,
 * anything under `.git/`, and any write in a read-only task. A missing file is `resourceNotFound`, as ACP asks.
 */
export class WorkspaceFs {
  private realWorkspace?: Promise<string>;

  constructor(private readonly options: WorkspaceFsOptions) {}

  async read(params: { path: string; line?: number | null; limit?: number | null }): Promise<{ content: string }> {
    const file = this.checkPath(params.path, 'read');
    const real = await this.realInside(file, 'read');
    if (real === undefined) throw RequestError.resourceNotFound(params.path);
    let buffer: Buffer;
    try {
      buffer = await readRegularFileBounded(real, MAX_READ_BYTES);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw RequestError.resourceNotFound(params.path);
      if (err instanceof UnsafeFileError) throw refused(`${params.path}: ${err.message}`);
      throw err;
    }
    return { content: sliceLines(buffer.toString('utf8'), params.line ?? undefined, params.limit ?? undefined) };
  }

  async write(params: { path: string; content: string }): Promise<Record<string, never>> {
    const file = this.checkPath(params.path, 'write');
    if (this.options.mode === 'read-only' && !this.isExtra(file)) throw refused(`${params.path}: this task is read-only, no file may be written`);
    const target = (await this.realInside(file, 'write')) ?? (await this.createParents(file));
    const existed = await fs.lstat(target).then((s) => {
      if (!s.isFile()) throw refused(`${params.path} is not a regular file`);
      return true;
    }, (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    });
    // O_NOFOLLOW: a symlink planted between the check and the open fails the write instead of leading it elsewhere.
    const handle = await fs.open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0), 0o644);
    try {
      await handle.writeFile(params.content, 'utf8');
    } finally {
      await handle.close();
    }
    const root = await this.workspaceReal();
    if (!isInside(target, root)) {
      this.options.emit([{ type: 'progress', message: `The agent wrote ${target} through the client.` }]);
      return {};
    }
    const rel = path.relative(root, target).split(path.sep).join('/');
    this.options.onWritten?.(rel);
    this.options.emit([{ type: 'file_changed', path: rel, action: existed ? 'modified' : 'created' }]);
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

  /** The file's real path when it exists and stays inside (symlinks resolved); undefined when it does not exist. */
  private async realInside(file: string, verb: 'read' | 'write'): Promise<string | undefined> {
    let real: string;
    try {
      real = await fs.realpath(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    if (this.isExtra(file) && real === file) return real;
    if (!isInside(real, await this.workspaceReal())) throw refused(`${file} leads outside the task's workspace through a symbolic link; ${verb} refused`);
    return real;
  }

  /** For a new file: its parent folders, checked to resolve inside the workspace, then created. */
  private async createParents(file: string): Promise<string> {
    if (this.isExtra(file)) return file;
    const root = await this.workspaceReal();
    let existing = path.dirname(file);
    const missing: string[] = [];
    for (;;) {
      const real = await fs.realpath(existing).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
      if (real !== undefined) {
        if (!isInside(real, root)) throw refused(`${file} leads outside the task's workspace through a symbolic link; write refused`);
        const dir = path.join(real, ...missing);
        await fs.mkdir(dir, { recursive: true });
        return path.join(dir, path.basename(file));
      }
      missing.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }

  private isExtra(file: string): boolean {
    return (this.options.extraFiles ?? []).some((extra) => path.resolve(extra) === file);
  }

  private workspaceReal(): Promise<string> {
    this.realWorkspace ??= fs.realpath(this.options.workspace);
    return this.realWorkspace;
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

function refused(message: string): RequestError {
  return RequestError.invalidParams({ reason: message }, message);
}
