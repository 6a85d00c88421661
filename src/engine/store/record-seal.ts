import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../../base/atomic';
import { parseTaskDir } from '../../protocol';
import { recordKey } from './record-key';

/*
 * Records that say who wrote them. state.json, result.json, applied.json and every line of events.jsonl carry an
 * HMAC-SHA256 under the user's record key (record-key.ts), bound to the kind of record, the task id and the real path
 * of the root (the repository) whose `.caesar/tasks` holds it. Anyone without the key — an agent inside the sandbox,
 * a repository that ships a `.caesar/tasks` folder, a task folder copied in from another root — cannot make a record
 * that verifies, so every reader can tell Caesar's word from anyone else's.
 *
 * A JSON record holds its seal in a `caesar_seal` member ({v, root, mac}); the MAC covers the compact JSON of the rest.
 * An event line ends with a `caesar_mac` member; the MAC covers the line's own bytes without it (no re-serialising:
 * a 100k-event log verifies at the speed of HMAC, see bench/record-seal.bench.ts). The agent's own files (report.json,
 * agent-events.jsonl, questions/) are never sealed: they are the agent's word and are read as such.
 */

export type RecordKind = 'state' | 'result' | 'applied' | 'event';

export interface RecordBinding {
  /** Real path of the root whose tasks folder holds the record. */
  root: string;
  taskId: string;
}

export type SealVerdict =
  | { ok: true }
  /** No seal at all: written before records were sealed, or by someone who stripped it. Never the truth. */
  | { ok: false; reason: 'unsigned'; message: string }
  /** A seal made with Caesar's key, for the same task, under another root: a task folder copied in. Refused. */
  | { ok: false; reason: 'other-root'; message: string; sealedRoot: string }
  /** A seal that does not verify: the record was changed by someone else after Caesar wrote it. */
  | { ok: false; reason: 'forged'; message: string };

export const SEAL_FIELD = 'caesar_seal';
export const EVENT_MAC_FIELD = 'caesar_mac';
const VERSION = 1;

const realRoots = new Map<string, string>();

/** The root's real path (cached: every reader asks per record), so a checkout reached through a symlink is one root. */
export function realRoot(root: string): string {
  const absolute = path.resolve(root);
  let real = realRoots.get(absolute);
  if (real === undefined) {
    try {
      real = realpathSync(absolute);
    } catch {
      real = absolute;
    }
    realRoots.set(absolute, real);
  }
  return real;
}

export function bindingOf(root: string, taskId: string): RecordBinding {
  return { root: realRoot(root), taskId };
}

/**
 * The binding of a file inside a task folder (`<root>/.caesar/tasks/<id>/<name>`). A file elsewhere (a writer under
 * test in a bare folder) is bound to its folder as both root and id: readers only ever read task folders.
 */
export function bindingOfTaskFile(file: string): RecordBinding {
  const folder = path.dirname(path.resolve(file));
  try {
    const { root, id } = parseTaskDir(folder);
    return bindingOf(root, id);
  } catch {
    return bindingOf(folder, path.basename(folder));
  }
}

/** HMAC-SHA256 truncated to 128 bits (32 hex digits): as strong a tag as forging needs, 32 bytes less per event line. */
function mac(kind: RecordKind, root: string, taskId: string, body: string): string {
  return createHmac('sha256', secretKey()).update(`caesar-record/v${VERSION}\n${kind}\n${root}\n${taskId}\n`).update(body).digest('hex').slice(0, MAC_HEX);
}

const MAC_HEX = 32;
let keyObject: KeyObject | undefined;

/** The record key as a KeyObject, made once: createHmac then takes it without copying the bytes each time. */
function secretKey(): KeyObject {
  keyObject ??= createSecretKey(recordKey());
  return keyObject;
}

function sameMac(expected: string, given: string): boolean {
  if (given.length !== MAC_HEX) return false;
  return timingSafeEqual(Buffer.from(expected, 'latin1'), Buffer.from(given, 'latin1'));
}

/** The document with its seal, as the object to write (JSON.stringify of it, pretty or not, verifies). */
export function sealDocument(kind: RecordKind, binding: RecordBinding, doc: object): Record<string, unknown> {
  const { [SEAL_FIELD]: _old, ...rest } = doc as Record<string, unknown>;
  return { ...rest, [SEAL_FIELD]: { v: VERSION, root: binding.root, mac: mac(kind, binding.root, binding.taskId, JSON.stringify(rest)) } };
}

/** Writes a sealed record atomically; its binding comes from where it lives. */
export async function writeSealedJson(file: string, kind: RecordKind, doc: object): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(sealDocument(kind, bindingOfTaskFile(file), doc), null, 2)}\n`);
}

/** The text writeSealedJson would write (for writers that write durably themselves). */
export function sealedJsonText(file: string, kind: RecordKind, doc: object): string {
  return `${JSON.stringify(sealDocument(kind, bindingOfTaskFile(file), doc), null, 2)}\n`;
}

/**
 * Checks a parsed JSON record's seal and gives back the document without it. `name` is used in messages (the file).
 */
export function openDocument(kind: RecordKind, binding: RecordBinding, value: unknown, name: string): { doc: unknown; verdict: SealVerdict } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { doc: value, verdict: unsigned(name) };
  const { [SEAL_FIELD]: seal, ...rest } = value as Record<string, unknown>;
  if (seal === undefined) return { doc: rest, verdict: unsigned(name) };
  const { root, mac: given } = (seal && typeof seal === 'object' ? seal : {}) as { root?: unknown; mac?: unknown };
  if (typeof root !== 'string' || typeof given !== 'string') return { doc: rest, verdict: forged(name, 'its seal is malformed') };
  const body = JSON.stringify(rest);
  return { doc: rest, verdict: judge(kind, binding, root, given, body, name) };
}

function judge(kind: RecordKind, binding: RecordBinding, sealedRoot: string, given: string, body: string, name: string): SealVerdict {
  if (sealedRoot === binding.root && sameMac(mac(kind, binding.root, binding.taskId, body), given)) return { ok: true };
  if (sealedRoot !== binding.root && sameMac(mac(kind, sealedRoot, binding.taskId, body), given)) {
    return {
      ok: false,
      reason: 'other-root',
      sealedRoot,
      message: `${name} of task ${binding.taskId} belongs to the repository ${sealedRoot}, not to ${binding.root}: a task folder copied in from another root is refused`,
    };
  }
  return forged(name, `it was changed by someone other than Caesar (its seal does not verify for task ${binding.taskId} in ${binding.root})`);
}

function unsigned(name: string): SealVerdict {
  return { ok: false, reason: 'unsigned', message: `${name} carries no seal of Caesar's: unverified (written before records were sealed, or not by Caesar)` };
}

function forged(name: string, why: string): SealVerdict {
  return { ok: false, reason: 'forged', message: `${name} is not Caesar's record: ${why}` };
}

/** One event line (compact JSON of a `{…}` object, no newline) with its MAC appended as the last member. */
export function sealEventLine(binding: RecordBinding, json: string): string {
  return `${json.slice(0, -1)},"${EVENT_MAC_FIELD}":"${mac('event', binding.root, binding.taskId, json)}"}`;
}

const MAC_PREFIX = `,"${EVENT_MAC_FIELD}":"`;
/** The seal's fixed length at the end of a line: read by position, no scan of the line (the follow path is hot). */
const SUFFIX_LENGTH = MAC_PREFIX.length + MAC_HEX + 2;
const HEX = /^[0-9a-f]+$/;

/** Whether an events.jsonl line (trimmed) is Caesar's, for this task under this root. */
export function verifyEventLine(binding: RecordBinding, line: string): SealVerdict {
  const at = line.length - SUFFIX_LENGTH;
  const given = line.slice(at + MAC_PREFIX.length, line.length - 2);
  if (at < 1 || !line.startsWith(MAC_PREFIX, at) || !line.endsWith('"}') || !HEX.test(given)) {
    return { ok: false, reason: 'unsigned', message: 'an event line without Caesar\'s seal (not written by Caesar)' };
  }
  const body = `${line.slice(0, at)}}`;
  if (sameMac(mac('event', binding.root, binding.taskId, body), given)) return { ok: true };
  return { ok: false, reason: 'forged', message: `an event line whose seal does not verify for task ${binding.taskId} in ${binding.root} (not written by Caesar, or copied from elsewhere)` };
}
