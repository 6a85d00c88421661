import * as path from 'node:path';
import { z } from '../../protocol/zod';
import { MAX_BYTES, ProtocolError, TASK_FILES, formatIssues, parseJsonBounded, taskPaths, tasksDir } from '../../protocol';
import type { SafeReadOptions } from '../../base/safe-read';
import { readJsonText } from './atomic';
import { bindingOfTaskFile, openDocument, type RecordKind, type SealVerdict } from './record-seal';

const DEFAULT_MAX_JSON = 4 * 1024 * 1024;

export interface SealedRecord<T> {
  value: T;
  verdict: SealVerdict;
}

/**
 * Reads one of Caesar's sealed records (state.json, result.json, applied.json): undefined when there is none, else
 * the validated document and whether its seal verifies. What to do with an unverified one is the caller's to say
 * (the store shows it as unverified, apply refuses it); nobody gets it without its verdict.
 */
export async function readSealedJsonFile<T>(
  file: string,
  kind: RecordKind,
  schema: z.ZodType<T>,
  maxBytes = DEFAULT_MAX_JSON,
  options: SafeReadOptions = {},
): Promise<SealedRecord<T> | undefined> {
  const text = await readJsonText(file, maxBytes, options);
  if (text === undefined) return undefined;
  const name = path.basename(file);
  const { doc, verdict } = openDocument(kind, bindingOfTaskFile(file), parseJsonBounded(text, name, maxBytes), name);
  const result = schema.safeParse(doc);
  if (!result.success) throw new ProtocolError(`Invalid ${name}`, formatIssues(result.error));
  return { value: result.data, verdict };
}

/** Error thrown by writers and appliers that must not act on a record Caesar did not write. */
export class UnverifiedRecordError extends Error {
  constructor(readonly verdict: Exclude<SealVerdict, { ok: true }>) {
    super(verdict.message);
    this.name = 'UnverifiedRecordError';
  }
}

/** The record's document when its seal verifies; otherwise an UnverifiedRecordError saying why. */
export async function readVerifiedJsonFile<T>(file: string, kind: RecordKind, schema: z.ZodType<T>, maxBytes?: number, options?: SafeReadOptions): Promise<T | undefined> {
  const record = await readSealedJsonFile(file, kind, schema, maxBytes, options);
  if (!record) return undefined;
  if (!record.verdict.ok) throw new UnverifiedRecordError(record.verdict);
  return record.value;
}

const RECORD_FILES: Array<{ kind: RecordKind; name: string; required: boolean }> = [
  { kind: 'state', name: TASK_FILES.state, required: true },
  { kind: 'result', name: TASK_FILES.result, required: false },
  { kind: 'applied', name: TASK_FILES.applied, required: false },
];

/**
 * Why a task's own records cannot be acted on: each of state.json, result.json and applied.json that is there and does
 * not verify (or cannot be read), and a missing state.json. Empty when every record is Caesar's. For apply and gc,
 * which change the user's files on the records' word.
 */
export async function unverifiedTaskRecords(root: string, id: string): Promise<string[]> {
  const paths = taskPaths(root, id);
  const problems: string[] = [];
  for (const { kind, name, required } of RECORD_FILES) {
    const file = path.join(paths.dir, name);
    try {
      const record = await readSealedJsonFile(file, kind, z.unknown(), MAX_BYTES.result, { within: tasksDir(root) });
      if (!record && required) problems.push(`${name} is missing`);
      if (record && !record.verdict.ok) problems.push(record.verdict.message);
    } catch (error) {
      problems.push(`${name} cannot be read (${(error as Error).message})`);
    }
  }
  return problems;
}
