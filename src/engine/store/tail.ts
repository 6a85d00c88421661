import { promises as fs, watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';
import { openRegularFileWithStats } from '../../base/safe-read';
import { toDisposable, type IDisposable as Disposable } from '../../base/disposable';

export interface TailOptions {
  /** Byte offset to start from (0 = whole file). Resuming from a returned nextOffset never repeats or skips a line. */
  fromOffset: number;
  /** Complete lines since the last call, and the offset just after the last complete line. */
  onLines(lines: string[], nextOffset: number): void;
  onError?(error: Error): void;
  /**
   * A slow stat-only safety net for file systems where fs.watch does not fire (some network mounts). It reads only
   * when the size grew, so it costs one stat per period. 0 disables it.
   */
  safetyIntervalMs?: number;
}

const CHUNK = 256 * 1024;

/**
 * Follows an append-only file by byte offset, driven by fs.watch (DESIGN.md principle 5: watch, don't poll; never
 * re-read the whole file). A partial last line is held until its newline arrives. The file may not exist yet.
 */
export function tailLines(file: string, options: TailOptions): Disposable {
  let offset = options.fromOffset;
  let partial = Buffer.alloc(0);
  let reading = false;
  let again = false;
  let disposed = false;

  const readNew = async (): Promise<void> => {
    if (disposed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        await drain();
      } while (again && !disposed);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') options.onError?.(err as Error);
    } finally {
      reading = false;
    }
  };

  const drain = async (): Promise<void> => {
    // Regular file only, opened without following a symlink or blocking on a FIFO (DESIGN.md principle 6).
    const { handle, stats } = await openRegularFileWithStats(file);
    try {
      const { size } = stats;
      if (size < offset) {
        // Truncated (a re-run rewrote it): start over rather than read garbage from the middle.
        offset = 0;
        partial = Buffer.alloc(0);
      }
      // Only the bytes past our offset, up to the size just read: a busy log costs each wake-up its growth, not a
      // 256 KiB buffer and a read at the end of file. Bytes appended meanwhile wake us again (readNew's `again`).
      while (!disposed && offset < size) {
        const buffer = Buffer.allocUnsafe(Math.min(CHUNK, size - offset)); // emitLines copies what it keeps
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        if (bytesRead === 0) break; // shrunk meanwhile: the next wake-up sees it
        offset += bytesRead;
        emitLines(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  };

  const emitLines = (chunk: Buffer): void => {
    const data = partial.length ? Buffer.concat([partial, chunk]) : chunk;
    const lastNewline = data.lastIndexOf(0x0a);
    if (lastNewline < 0) {
      partial = Buffer.from(data);
      return;
    }
    partial = Buffer.from(data.subarray(lastNewline + 1));
    const lines = data.subarray(0, lastNewline).toString('utf8').split('\n');
    if (!disposed) options.onLines(lines, offset - partial.length);
  };

  const watcher = watchFileInDir(file, () => void readNew(), options.onError);
  const interval = options.safetyIntervalMs ?? 2000;
  const timer = interval > 0 ? setInterval(() => void statThenRead(), interval) : undefined;
  timer?.unref?.();
  const statThenRead = async () => {
    try {
      const { size } = await fs.stat(file);
      if (size !== offset) void readNew();
    } catch {
      /* not there yet */
    }
  };
  void readNew();

  return toDisposable(() => {
    disposed = true;
    watcher?.close();
    if (timer) clearInterval(timer);
  });
}

/** fs.watch on the file's directory (the file may be created later), filtered to that file's name. */
export function watchFileInDir(file: string, onChange: () => void, onError?: (error: Error) => void): FSWatcher | undefined {
  const name = path.basename(file);
  try {
    const watcher = watch(path.dirname(file), { persistent: false }, (_event, changed) => {
      if (!changed || changed.toString() === name) onChange();
    });
    watcher.on('error', (err) => onError?.(err));
    return watcher;
  } catch (err) {
    onError?.(err as Error);
    return undefined;
  }
}
