import { stringify } from 'smol-toml';

/**
 * A line-level view of a TOML document: where each table header and each key/value sits. smol-toml parses values but
 * forgets positions and comments, so this scanner serves two needs the parser cannot: naming the LINE of a schema
 * error, and editing one key in place so the rest of a hand-written file (comments included) survives a write.
 * It is deliberately shallow: it understands headers, dotted keys, strings and multi-line arrays, which is all it
 * must step over; the result of every edit is re-parsed and verified by the caller.
 */

export type KeyPath = Array<string | number>;

export interface Section {
  /** Header path, [] for the root table. */
  header: string[];
  /** `[[header]]` (one element of an array of tables). */
  arrayItem: boolean;
  /** 0-based index among the `[[header]]` items with this header; 0 otherwise. */
  index: number;
  /** 0-based line of the header; -1 for the root table. */
  headerLine: number;
  /** 0-based line after the section (the next header or the end of the file). */
  end: number;
  entries: Entry[];
}

export interface Entry {
  key: string[];
  /** 0-based first and last line of `key = value` (multi-line arrays and strings span several). */
  line: number;
  endLine: number;
  /** What follows the value on its last line (a comment, usually), kept verbatim by edits. */
  trailing: string;
  indent: string;
}

const BARE = /^[A-Za-z0-9_-]+/;

/** Reads a (possibly dotted, possibly quoted) key at the start of `text`; returns its parts and the length read. */
function readKey(text: string): { parts: string[]; length: number } | undefined {
  const parts: string[] = [];
  let i = 0;
  for (;;) {
    while (text[i] === ' ' || text[i] === '\t') i++;
    const rest = text.slice(i);
    const bare = BARE.exec(rest);
    if (bare) {
      parts.push(bare[0]);
      i += bare[0].length;
    } else if (rest.startsWith('"')) {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(rest);
      if (!m) return undefined;
      try {
        parts.push(JSON.parse(m[0]) as string);
      } catch {
        return undefined;
      }
      i += m[0].length;
    } else if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      if (end < 0) return undefined;
      parts.push(rest.slice(1, end));
      i += end + 1;
    } else {
      return undefined;
    }
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text[i] !== '.') return { parts, length: i };
    i++;
  }
}

interface ValueEnd {
  endLine: number;
  endColumn: number;
}

/**
 * Follows a value from (line, column) to its end, stepping over strings (all four kinds), brackets and comments.
 * The value ends on the first line where brackets are balanced and no string is open; the end column excludes a
 * trailing comment and the blanks before it.
 */
function scanValue(lines: string[], line: number, column: number): ValueEnd {
  let depth = 0;
  let inString: '"' | "'" | '"""' | "'''" | undefined;
  for (let l = line; l < lines.length; l++) {
    const text = lines[l]!;
    const from = l === line ? column : 0;
    let c = from;
    let commentAt = -1;
    while (c < text.length) {
      const ch = text[c]!;
      if (inString) {
        if ((inString === '"""' || inString === "'''") && text.startsWith(inString, c)) {
          c += 3;
          // A closing delimiter may be followed by up to two more quotes that belong to the string.
          while (text[c] === inString[0]) c++;
          inString = undefined;
          continue;
        }
        if ((inString === '"' || inString === '"""') && ch === '\\') {
          c += 2;
          continue;
        }
        if ((inString === '"' || inString === "'") && ch === inString) inString = undefined;
        c++;
        continue;
      }
      if (ch === '#') {
        commentAt = c;
        break;
      }
      if (text.startsWith('"""', c) || text.startsWith("'''", c)) {
        inString = text.slice(c, c + 3) as '"""' | "'''";
        c += 3;
        continue;
      }
      if (ch === '"' || ch === "'") inString = ch;
      else if (ch === '[' || ch === '{') depth++;
      else if (ch === ']' || ch === '}') depth--;
      c++;
    }
    // A single-line string cannot span lines; an unterminated one is the parser's problem, not ours.
    if (inString === '"' || inString === "'") inString = undefined;
    if (depth <= 0 && !inString) {
      let end = commentAt < 0 ? text.length : commentAt;
      while (end > from && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
      return { endLine: l, endColumn: end };
    }
  }
  return { endLine: lines.length - 1, endColumn: lines[lines.length - 1]?.length ?? 0 };
}

export function splitLines(text: string): string[] {
  return text.split(/\r?\n/);
}

/** The sections of a document, in order. The root section is always first. */
export function scanSections(text: string): Section[] {
  const lines = splitLines(text);
  const root: Section = { header: [], arrayItem: false, index: 0, headerLine: -1, end: lines.length, entries: [] };
  const sections: Section[] = [root];
  const arrayCounts = new Map<string, number>();
  let current = root;
  for (let l = 0; l < lines.length; l++) {
    const text = lines[l]!;
    const trimmed = text.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    if (trimmed.startsWith('[')) {
      const arrayItem = trimmed.startsWith('[[');
      const key = readKey(trimmed.slice(arrayItem ? 2 : 1));
      if (key) {
        current.end = l;
        const name = key.parts.join('\u0000');
        const index = arrayItem ? (arrayCounts.get(name) ?? 0) : 0;
        if (arrayItem) arrayCounts.set(name, index + 1);
        current = { header: key.parts, arrayItem, index, headerLine: l, end: lines.length, entries: [] };
        sections.push(current);
        continue;
      }
    }
    const key = readKey(text);
    const afterKey = key ? text.slice(key.length) : '';
    if (!key || !afterKey.startsWith('=')) continue;
    const valueStart = key.length + 1;
    const { endLine, endColumn } = scanValue(lines, l, valueStart);
    current.entries.push({
      key: key.parts,
      line: l,
      endLine,
      trailing: lines[endLine]!.slice(endColumn),
      indent: /^\s*/.exec(text)![0],
    });
    l = endLine;
  }
  return sections;
}

/** The full path of an entry: the header (with the item index for arrays of tables) then the dotted key. */
function entryPath(section: Section, entry?: Entry): KeyPath {
  const head: KeyPath = section.arrayItem ? [...section.header, section.index] : [...section.header];
  return entry ? [...head, ...entry.key] : head;
}

function commonPrefix(a: KeyPath, b: KeyPath): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * The 1-based line that best matches a field path: the entry or header sharing the longest prefix with it.
 * `['policy', 'max_paralel']` finds the key line; `['agent', 0, 'args', 2]` finds the `args = …` line.
 */
export function locateKey(text: string, path: KeyPath): number | undefined {
  let best: { score: number; line: number } | undefined;
  const consider = (candidate: KeyPath, line: number) => {
    const score = commonPrefix(candidate, path);
    // Only a candidate fully contained in the path can be where the path is written.
    if (score < candidate.length || score === 0) return;
    if (!best || score > best.score) best = { score, line };
  };
  for (const section of scanSections(text)) {
    if (section.headerLine >= 0) consider(entryPath(section), section.headerLine);
    for (const entry of section.entries) consider(entryPath(section, entry), entry.line);
  }
  return best ? best.line + 1 : undefined;
}

/** `key = value` as TOML spells it (quoting the key when needed), without the newline. */
export function formatAssignment(key: string, value: unknown): string {
  return stringify({ [key]: value }).trim();
}

function findTable(sections: Section[], table: string): Section | undefined {
  return sections.find((s) => !s.arrayItem && s.header.length === 1 && s.header[0] === table);
}

/** Whether `table` is (partly) spelled in a way this editor does not rewrite: dotted root keys or sub-tables. */
function tableHasOtherSpellings(sections: Section[], table: string): boolean {
  const root = sections[0]!;
  if (root.entries.some((e) => e.key[0] === table)) return true;
  return sections.some((s) => s.header[0] === table && (s.header.length > 1 || s.arrayItem));
}

/**
 * Sets `[table] key = value` in place. Returns the new text, or undefined when the table is written in a form this
 * editor does not touch (the caller then rewrites the file whole).
 */
export function setTableKey(text: string, table: string, key: string, value: unknown): string | undefined {
  const lines = splitLines(text);
  const sections = scanSections(text);
  if (tableHasOtherSpellings(sections, table)) return undefined;
  const section = findTable(sections, table);
  const assignment = formatAssignment(key, value);
  if (!section) {
    const body = text.replace(/\s*$/, '');
    return `${body}${body ? '\n\n' : ''}[${formatTableName(table)}]\n${assignment}\n`;
  }
  const entries = section.entries.filter((e) => e.key.length === 1 && e.key[0] === key);
  if (section.entries.some((e) => e.key.length > 1 && e.key[0] === key)) return undefined;
  if (entries.length > 1) return undefined;
  const entry = entries[0];
  if (entry) {
    lines.splice(entry.line, entry.endLine - entry.line + 1, `${entry.indent}${assignment}${entry.trailing}`);
  } else {
    const last = section.entries[section.entries.length - 1];
    const at = last ? last.endLine + 1 : section.headerLine + 1;
    lines.splice(at, 0, `${last?.indent ?? ''}${assignment}`);
  }
  return lines.join('\n');
}

/** Removes `[table] key`; undefined when it is not written as a plain key of a `[table]` header. */
export function removeTableKey(text: string, table: string, key: string): string | undefined {
  const sections = scanSections(text);
  if (tableHasOtherSpellings(sections, table)) return undefined;
  const section = findTable(sections, table);
  const entry = section?.entries.find((e) => e.key.length === 1 && e.key[0] === key);
  if (!entry) return undefined;
  const lines = splitLines(text);
  lines.splice(entry.line, entry.endLine - entry.line + 1);
  return lines.join('\n');
}

function formatTableName(name: string): string {
  return BARE.exec(name)?.[0] === name ? name : JSON.stringify(name);
}

/** Appends one `[[table]]` item holding `entry`. */
export function appendArrayItem(text: string, table: string, entry: Record<string, unknown>): string {
  const body = stringify(entry).trim();
  const head = text.replace(/\s*$/, '');
  return `${head}${head ? '\n\n' : ''}[[${formatTableName(table)}]]\n${body}\n`;
}

/**
 * Removes the `index`-th `[[table]]` item (counting only items written with a `[[table]]` header). Comment lines
 * right after the item's last value are left in place: they usually introduce what follows.
 */
export function removeArrayItem(text: string, table: string, index: number): string | undefined {
  const sections = scanSections(text);
  const section = sections.find((s) => s.arrayItem && s.header.length === 1 && s.header[0] === table && s.index === index);
  if (!section) return undefined;
  // Sub-tables of the item (`[table.sub]`) would be orphaned: not a form this editor handles.
  const next = sections[sections.indexOf(section) + 1];
  if (next && next.header[0] === table && !next.arrayItem) return undefined;
  const lines = splitLines(text);
  const lastEntry = section.entries[section.entries.length - 1];
  let end = lastEntry ? lastEntry.endLine + 1 : section.headerLine + 1;
  while (end < section.end && lines[end]!.trim() === '') end++;
  let start = section.headerLine;
  // Swallow the blank line that separated the item from what precedes it.
  if (start > 0 && lines[start - 1]!.trim() === '') start--;
  lines.splice(start, end - start);
  return lines.join('\n');
}
