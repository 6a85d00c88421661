import { existsSync, promises as fs, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from './errors';
import { AgentEntrySchema, LauncherLayerSchema, LayerSchema, PolicyLayerSchema, RoleSchema, WorktreeLayerSchema, type Layer, type LayerName } from './schema';
import { locateKey, type KeyPath } from './toml-source';

/*
 * Where the config layers live and how one file is read: located, parsed as TOML and validated, with problems named
 * by line. Merging the layers into one config is src/config/layers.ts.
 */

/** The caesar directory name inside a root; kept here (not imported) so config stays independent of the task layout. */
const CAESAR_DIR = '.caesar';

export interface LayerFiles {
  global: string;
  /** Absent when no root is known (e.g. `caesar init --global` outside any project). */
  project?: string;
  local?: string;
}

/** $HOME wins over os.homedir(), so tests and sandboxes can move the global layer. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && env.HOME.trim() !== '' ? env.HOME : os.homedir();
}

export function layerFiles(root: string | undefined, home: string): LayerFiles {
  const files: LayerFiles = { global: path.join(home, '.config', 'caesar', 'config.toml') };
  if (root) {
    files.project = path.join(root, CAESAR_DIR, 'config.toml');
    files.local = path.join(root, CAESAR_DIR, 'config.local.toml');
  }
  return files;
}

/** The caesar root of a directory: the first ancestor holding `.caesar/` or `.git`, else the directory itself. */
export function findRoot(start: string): string {
  const absolute = path.resolve(start);
  for (let dir = absolute; ; dir = path.dirname(dir)) {
    if (isDirectory(path.join(dir, CAESAR_DIR)) || existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return absolute;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** One config file as read from disk: its text (for locating and editing), its raw TOML and its validated form. */
export interface LoadedLayer {
  scope: LayerName;
  file: string;
  text: string;
  raw: Record<string, unknown>;
  data: Layer;
}

/** Reads and validates one layer; a missing file is `undefined`, never an error. */
export async function readLayer(scope: LayerName, file: string): Promise<LoadedLayer | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(file, [{ key: '', message: (err as Error).message }], `Cannot read config file ${file}: ${(err as Error).message}`);
  }
  const raw = parseToml(file, text);
  return { scope, file, text, raw, data: validateLayer(file, text, raw) };
}

export function parseToml(file: string, text: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const firstLine = err.message.split('\n')[0] ?? err.message;
      throw new ConfigError(
        file,
        [{ key: '', message: firstLine, line: err.line, column: err.column }],
        `Invalid TOML file: ${file} (line ${err.line}, column ${err.column}) — ${firstLine}`,
      );
    }
    throw err;
  }
}

/** Known fields per table, for "unknown field" messages that suggest the right spelling. */
const KNOWN_FIELDS: Record<string, readonly string[]> = {
  '': Object.keys(LayerSchema.shape),
  policy: Object.keys(PolicyLayerSchema.shape),
  worktree: Object.keys(WorktreeLayerSchema.shape),
  role: Object.keys(RoleSchema.shape),
  agent: Object.keys(AgentEntrySchema.shape),
  launcher: Object.keys(LauncherLayerSchema.shape),
};

export function validateLayer(file: string, text: string, raw: unknown): Layer {
  const result = LayerSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => describeIssue(text, issue));
  // In file order, so the first problem named is the first one a reader meets.
  problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  throw new ConfigError(file, problems);
}

function describeIssue(text: string, issue: z.core.$ZodIssue): ConfigProblem[] {
  const base = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const table = typeof base[0] === 'string' ? base[0] : '';
    const known = KNOWN_FIELDS[base.length === 0 ? '' : table] ?? [];
    return issue.keys.map((key) => {
      const at = [...base, key];
      return {
        key: formatPath(at),
        message: `unknown field (check for a typo${known.length ? `; known fields: ${known.join(', ')}` : ''})`,
        line: locateKey(text, at),
      };
    });
  }
  return [{ key: formatPath(base), message: issue.message, line: locateKey(text, base) }];
}

/** `['role', 1, 'mode']` → `role[1].mode`. */
export function formatPath(at: KeyPath): string {
  return at.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}
