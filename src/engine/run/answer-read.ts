import { promises as fs } from 'node:fs';
import { AnswerFileSchema, formatBytes, ProtocolError } from '../../protocol';
import { openRegularFile } from '../../base/safe-read';
import { readJsonFile } from '../store/atomic';
import { MAX_EVENT_TEXT } from './events-writer';

/** An answer file up to this size is read whole; a larger one only from its beginning (the event needs no more). */
export const MAX_ANSWER_READ_BYTES = 16 * 1024 * 1024;

/** Room kept under MAX_EVENT_TEXT for the marker, so the events writer never clamps again (with its raw.log note). */
const MARKER_ROOM = 256;

export interface AnswerForRelay {
  /** The whole answer when the file was read whole, else its beginning. */
  answer: string;
  /** What the `answer` event carries: the answer, or its beginning and a marker saying where the rest is. */
  eventText: string;
  by?: string;
}

export interface AnswerCap {
  /** The most characters the capped text may hold, marker included (default: an event's MAX_EVENT_TEXT). */
  maxChars?: number;
  /** Where the marker says the whole answer is (default: `answers/<name>`). */
  wholeIn?: string;
}

/**
 * An answer as the supervisor relays it (issue 23: a 10 MB answer was written, then never relayed, since the file
 * was over the reader's 4 MiB bound). Every answer is relayed, however large: the event carries at most
 * MAX_EVENT_TEXT characters with a marker naming the file, which keeps the whole answer. undefined: not an answer
 * to `id` (unreadable, malformed, another id).
 */
export async function readAnswerForRelay(file: string, id: string, name: string, cap: AnswerCap = {}): Promise<AnswerForRelay | undefined> {
  const maxChars = cap.maxChars ?? MAX_EVENT_TEXT;
  const wholeIn = cap.wholeIn ?? `answers/${name}`;
  try {
    const doc = await readJsonFile(file, AnswerFileSchema, MAX_ANSWER_READ_BYTES);
    if (!doc || doc.id !== id) return undefined;
    const eventText = doc.answer.length <= maxChars
      ? doc.answer
      : `${doc.answer.slice(0, maxChars - MARKER_ROOM)}… (truncated, ${doc.answer.length} characters in all; the whole answer is in ${wholeIn})`;
    return { answer: doc.answer, eventText, ...(doc.by ? { by: doc.by } : {}) };
  } catch (err) {
    if (!(err instanceof ProtocolError) || !/over the .* limit/.test(err.message)) return undefined;
    return readHead(file, id, maxChars, wholeIn);
  }
}

/** The id and the answer's beginning, read from the start of a file too large to parse (written id first). */
async function readHead(file: string, id: string, maxChars: number, wholeIn: string): Promise<AnswerForRelay | undefined> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await openRegularFile(file);
    const { size } = await handle.stat();
    // The id and as much of the answer as the cap lets through, escapes included (at most 6 bytes a character).
    const buffer = Buffer.alloc(Math.min(size, maxChars * 6 + 4096));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    const declared = /^\s*\{\s*"id"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(head)?.[1];
    if (declared === undefined || decode(declared) !== id) return undefined;
    const begun = /"answer"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(head)?.[1];
    if (begun === undefined) return undefined;
    const answer = decode(begun.replace(/\\(u[0-9a-fA-F]{0,3})?$/, ''));
    if (answer === undefined) return undefined;
    const beginning = answer.slice(0, maxChars - MARKER_ROOM);
    return { answer: beginning, eventText: `${beginning}… (truncated, the answer file is ${formatBytes(size)}; the whole answer is in ${wholeIn})` };
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

function decode(jsonStringBody: string): string | undefined {
  try {
    return JSON.parse(`"${jsonStringBody}"`) as string;
  } catch {
    return undefined;
  }
}
