import { isDeepStrictEqual } from 'node:util';
import { parse, stringify } from 'smol-toml';
import { ConfigEditError } from './errors';
import { readTextOrEmpty, writeFileAtomic } from '../base/atomic';
import { layerFiles, parseToml, validateLayer, type LayerFiles } from './layer-files';
import type { LayerName, TransportName } from './schema';
import { appendArrayItem, removeArrayItem, removeTableKey, setTableKey, scanSections } from './toml-source';

/**
 * Writes to ONE layer file, never flattening the merge: only what the change names is touched. Edits are made on the
 * text (so comments and unrelated keys survive), then the result is parsed back and must equal the intended data;
 * if the file is spelled in a way the text editor does not handle (inline tables, dotted keys), the file is
 * rewritten whole from the data, with a header saying so, and the result tells the caller comments were lost.
 */

export const REWRITE_HEADER = '# Written by caesar. This file was rewritten whole: comments that were in it are gone.\n';

export interface LayerTarget {
  scope: LayerName;
  file: string;
}

export function targetLayer(files: LayerFiles, scope: LayerName): LayerTarget {
  const file = files[scope];
  if (!file) throw new ConfigEditError(`There is no ${scope} config here: no caesar root was found (run caesar init, or pass --root).`);
  return { scope, file };
}

/** Convenience: the target file for a scope given a root and a home. */
export function layerTarget(scope: LayerName, root: string | undefined, home: string): LayerTarget {
  return targetLayer(layerFiles(root, home), scope);
}

export interface WriteResult {
  file: string;
  /** False when the file had to be rewritten whole (its comments are lost). */
  preserved: boolean;
}

type Raw = Record<string, unknown>;


/** The raw TOML data of a layer file ({} when absent), validated so a broken file is never edited blind. */
export async function readLayerRaw(file: string): Promise<Raw> {
  const text = await readTextOrEmpty(file);
  const raw = parseToml(file, text);
  validateLayer(file, text, raw);
  return raw;
}

function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** The generic edit: `mutate` says what the data must become, `edit` tries to get there on the text. */
export async function editLayer(file: string, mutate: (raw: Raw) => void, edit: (text: string) => string | undefined): Promise<WriteResult> {
  const text = await readTextOrEmpty(file);
  const raw = parseToml(file, text);
  validateLayer(file, text, raw);
  const intended = plain(raw) as Raw;
  mutate(intended);
  validateLayer(file, '', intended);
  // The text editor works on LF lines; a CRLF file gets its line endings back afterwards.
  const crlf = text.includes('\r\n');
  let next = edit(crlf ? text.replace(/\r\n/g, '\n') : text);
  if (next !== undefined && !sameData(next, intended)) next = undefined;
  const preserved = next !== undefined;
  if (next === undefined) next = REWRITE_HEADER + stringify(intended);
  if (!next.endsWith('\n')) next = `${next}\n`;
  await writeFileAtomic(file, crlf ? next.replace(/\r?\n/g, '\r\n') : next);
  return { file, preserved };
}

function sameData(text: string, intended: Raw): boolean {
  try {
    return isDeepStrictEqual(plain(parse(text)), plain(intended));
  } catch {
    return false;
  }
}

function table(raw: Raw, name: string): Raw {
  const existing = raw[name];
  if (existing && typeof existing === 'object' && !Array.isArray(existing)) return existing as Raw;
  const created: Raw = {};
  raw[name] = created;
  return created;
}

/** `[policy] key = value` (TOML spelling of the key, e.g. `default_timeout`). */
export function setPolicyValue(file: string, tomlKey: string, value: unknown): Promise<WriteResult> {
  return setTableValue(file, 'policy', tomlKey, value);
}

export function setTableValue(file: string, tableName: string, key: string, value: unknown): Promise<WriteResult> {
  return editLayer(
    file,
    (raw) => {
      table(raw, tableName)[key] = value;
    },
    (text) => setTableKey(text, tableName, key, value),
  );
}

/** Removes `[table] key`; refuses when this file does not declare it. */
export async function removeTableValue(file: string, tableName: string, key: string): Promise<WriteResult> {
  const raw = await readLayerRaw(file);
  const current = raw[tableName] as Raw | undefined;
  if (!current || !(key in current)) throw new ConfigEditError(`${file} does not declare [${tableName}] ${key}.`);
  return editLayer(
    file,
    (data) => {
      const t = data[tableName] as Raw;
      delete t[key];
      if (Object.keys(t).length === 0) delete data[tableName];
    },
    (text) => {
      const edited = removeTableKey(text, tableName, key);
      if (edited === undefined) return undefined;
      // An empty table left behind would parse as `{}` where the data has nothing: drop its header too.
      return dropEmptyTable(edited, tableName);
    },
  );
}

function dropEmptyTable(text: string, tableName: string): string {
  const section = scanSections(text).find((s) => !s.arrayItem && s.header.length === 1 && s.header[0] === tableName);
  if (!section || section.entries.length > 0) return text;
  const lines = text.split(/\r?\n/);
  const onlyBlank = lines.slice(section.headerLine + 1, section.end).every((l) => l.trim() === '');
  if (!onlyBlank) return text;
  lines.splice(section.headerLine, section.end - section.headerLine);
  return lines.join('\n');
}

export function setModel(file: string, agent: string, model: string): Promise<WriteResult> {
  return setTableValue(file, 'models', agent, model);
}

export function unsetModel(file: string, agent: string): Promise<WriteResult> {
  return removeTableValue(file, 'models', agent);
}

/** `[transport] <agent> = "acp" | "stream"`. */
export function setTransport(file: string, agent: string, transport: TransportName): Promise<WriteResult> {
  return setTableValue(file, 'transport', agent, transport);
}

export function unsetTransport(file: string, agent: string): Promise<WriteResult> {
  return removeTableValue(file, 'transport', agent);
}

/** Adds or replaces (whole) the `[[table]]` item whose `keyField` equals the entry's. */
export async function upsertArrayItem(file: string, tableName: 'role' | 'agent', keyField: 'name' | 'id', entry: Raw): Promise<WriteResult> {
  const raw = await readLayerRaw(file);
  const items = (raw[tableName] as Raw[] | undefined) ?? [];
  const index = items.findIndex((item) => item[keyField] === entry[keyField]);
  return editLayer(
    file,
    (data) => {
      const list = ((data[tableName] as Raw[] | undefined) ?? []).filter((item) => item[keyField] !== entry[keyField]);
      list.push(entry);
      data[tableName] = list;
    },
    (text) => {
      const without = index >= 0 ? removeArrayItem(text, tableName, index) : text;
      return without === undefined ? undefined : appendArrayItem(without, tableName, entry);
    },
  );
}

/** Removes the `[[table]]` item with that key; refuses when this file does not declare it. */
export async function removeArrayItemByKey(file: string, tableName: 'role' | 'agent', keyField: 'name' | 'id', key: string): Promise<WriteResult> {
  const raw = await readLayerRaw(file);
  const items = (raw[tableName] as Raw[] | undefined) ?? [];
  const index = items.findIndex((item) => item[keyField] === key);
  if (index < 0) throw new ConfigEditError(`${file} does not declare [[${tableName}]] ${keyField} = "${key}".`);
  return editLayer(
    file,
    (data) => {
      const list = (data[tableName] as Raw[]).filter((item) => item[keyField] !== key);
      if (list.length) data[tableName] = list;
      else delete data[tableName];
    },
    (text) => removeArrayItem(text, tableName, index),
  );
}

export const upsertRole = (file: string, role: Raw) => upsertArrayItem(file, 'role', 'name', role);
export const removeRole = (file: string, name: string) => removeArrayItemByKey(file, 'role', 'name', name);
export const upsertAgentEntry = (file: string, entry: Raw) => upsertArrayItem(file, 'agent', 'id', entry);
export const removeAgentEntry = (file: string, id: string) => removeArrayItemByKey(file, 'agent', 'id', id);

/** Writes a whole layer from data (init). Refuses data that would not load back. */
export async function writeLayer(file: string, raw: Raw, header = ''): Promise<void> {
  const text = header + stringify(raw);
  validateLayer(file, text, parseToml(file, text));
  await writeFileAtomic(file, text.endsWith('\n') ? text : `${text}\n`);
}
