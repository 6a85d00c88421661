import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * The layering guard (DESIGN.md "Layers"): imports point down only, and only the VS Code layer imports `vscode`.
 * base (file and lifetime utilities) < protocol < config < agents < engine < (mcp | cli | extension) < bin; the three
 * front ends do not import each other, and bin (the process entry of dist/caesar.js) composes them.
 * Every folder under src/ must have a rank: a new folder no rule covers fails the guard until it is placed.
 * webview-ui/ is browser code: it may import only *types* from src/protocol and the timeline message contract, and
 * the browser-safe common layer (src/common: the shared task view and formatters) by value. src/common sits just
 * above protocol and stays browser-safe: no `node:` module, no package, and only types from protocol (whose values
 * pull zod in).
 *
 * The engine is itself a house of rooms (docs/architecture.md), ranked the same way: store (the task directory on
 * disk, above cluster: the job systems it asks about a task's job) < git < sandbox < process (the agent's process group) < acp < run (a task's supervisor) < resolve | launch
 * < tasks (the use cases). A room imports only lower rooms; only an index may sit directly in src/engine/. The front
 * ends (cli, mcp, extension, bin) reach the engine through its door, engine/tasks (types may come from anywhere):
 * an import of an inner room is refused unless a comment just above it says why ("not through engine/tasks: …").
 * And no import circle anywhere in src/, type-only and dynamic imports included.
 */
const RANK: Record<string, number> = { base: -1, protocol: 0, common: 0.5, config: 1, agents: 2, engine: 3, mcp: 4, cli: 4, extension: 4, bin: 5 };
const ENGINE_RANK: Record<string, number> = { cluster: -1, store: 0, git: 1, sandbox: 2, process: 3, acp: 4, run: 5, resolve: 6, launch: 6, tasks: 7 };
const FRONT_ENDS = new Set(['cli', 'mcp', 'extension', 'bin']);
/** The words a comment above a front end's import of an inner engine room must hold, followed by the reason. */
const DOOR_EXCUSE = /not through engine\/tasks:\s*\S.{10,}/s;
const WEBVIEW_TYPE_SOURCES = [/^src\/protocol\//, /^src\/extension\/[^/]+\/messages\.ts$/];
const WEBVIEW_VALUE_SOURCES = [/^src\/common\//];
/** The one module that imports zod by value: it configures zod before any schema is built (no parser JIT). */
const ZOD_HOME = 'src/protocol/zod.ts';

interface SourceFile {
  path: string; // relative to the project root, with forward slashes
  text: string;
}

interface ImportRef {
  specifier: string;
  typeOnly: boolean;
  /** The comments just above the import statement. */
  comment: string;
}

function importsOf(file: SourceFile): ImportRef[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const refs: ImportRef[] = [];
  const commentAbove = (node: ts.Node) =>
    (ts.getLeadingCommentRanges(file.text, node.getFullStart()) ?? []).map((r) => file.text.slice(r.pos, r.end)).join('\n');
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? Boolean(node.importClause?.isTypeOnly) : node.isTypeOnly;
      refs.push({ specifier: node.moduleSpecifier.text, typeOnly, comment: commentAbove(node) });
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) {
        refs.push({ specifier: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false, comment: '' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refs;
}

function layerOf(relPath: string): string | undefined {
  const match = /^src\/([^/]+)\//.exec(relPath);
  return match && match[1]! in RANK ? match[1] : undefined;
}

/** The engine room a path lies in ('' for a file directly in src/engine/), or undefined outside the engine. */
function engineRoomOf(relPath: string): string | undefined {
  if (!relPath.startsWith('src/engine/')) return undefined;
  return /^src\/engine\/([^/]+)\//.exec(relPath)?.[1] ?? '';
}

/** Where the engine's own layout breaks its rules: a loose file in src/engine/, a room without a rank. */
function engineLayoutViolations(files: SourceFile[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    const room = engineRoomOf(file.path);
    if (room === '' && file.path !== 'src/engine/index.ts') found.add(`${file.path} sits directly in src/engine/: put it in the room its work belongs to`);
    else if (room && !(room in ENGINE_RANK)) found.add(`src/engine/${room}/ is a room without a rank: give it one in ENGINE_RANK`);
  }
  return [...found].sort();
}

/** The engine's rules for one relative import: rooms import downward; front ends come in through engine/tasks. */
function engineImportViolation(file: SourceFile, fromLayer: string | undefined, ref: ImportRef, target: string): string | undefined {
  const toRoom = engineRoomOf(`${target}/`) === '' ? engineRoomOf(target) : engineRoomOf(`${target}/`);
  if (toRoom === undefined) return undefined;
  const fromRoom = engineRoomOf(file.path);
  if (fromRoom) {
    if (!toRoom || toRoom === fromRoom || !(fromRoom in ENGINE_RANK) || !(toRoom in ENGINE_RANK)) return undefined;
    if (ENGINE_RANK[toRoom]! >= ENGINE_RANK[fromRoom]!) return `${file.path} (engine/${fromRoom}) imports ${ref.specifier} (engine/${toRoom}): rooms import downward only`;
    return undefined;
  }
  if (!fromLayer || !FRONT_ENDS.has(fromLayer) || ref.typeOnly || toRoom === 'tasks' || DOOR_EXCUSE.test(ref.comment)) return undefined;
  return `${file.path} (${fromLayer}) imports ${ref.specifier}, an inner room of the engine: go through engine/tasks, or say above the import why not ("not through engine/tasks: …")`;
}

/** src/ folders (and files directly in src/) that no layer rule covers. */
export function uncoveredSources(files: SourceFile[]): string[] {
  const uncovered = new Set<string>();
  for (const file of files) {
    if (!file.path.startsWith('src/')) continue;
    const folder = /^src\/([^/]+)\//.exec(file.path)?.[1];
    if (!folder) uncovered.add(`${file.path} (a file directly in src/)`);
    else if (!(folder in RANK)) uncovered.add(`src/${folder}/`);
  }
  return [...uncovered].sort();
}

export function layeringViolations(files: SourceFile[]): string[] {
  const violations: string[] = [
    ...uncoveredSources(files).map((where) => `${where} is covered by no layering rule: give it a rank in RANK`),
    ...engineLayoutViolations(files),
  ];
  for (const file of files) {
    const fromLayer = layerOf(file.path);
    const isWebview = file.path.startsWith('webview-ui/');
    const isCommon = fromLayer === 'common';
    for (const ref of importsOf(file)) {
      if (isCommon && !ref.specifier.startsWith('.')) {
        violations.push(`${file.path} imports ${ref.specifier} (the common layer is browser-safe: no node: module, no package)`);
        continue;
      }
      if (ref.specifier === 'zod' && !ref.typeOnly && file.path !== ZOD_HOME) {
        violations.push(`${file.path} imports zod by value (build schemas with the z of ${ZOD_HOME}, which configures it)`);
        continue;
      }
      if (ref.specifier === 'vscode') {
        if (!file.path.startsWith('src/extension/') && !isWebview) violations.push(`${file.path} imports vscode`);
        continue;
      }
      if (!ref.specifier.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file.path), ref.specifier));
      if (isWebview) {
        if (target.startsWith('webview-ui/')) continue;
        const candidates = [target, `${target}.ts`, `${target}/`];
        const allowed =
          WEBVIEW_VALUE_SOURCES.some((re) => candidates.some((t) => re.test(t))) ||
          (ref.typeOnly && WEBVIEW_TYPE_SOURCES.some((re) => candidates.some((t) => re.test(t))));
        if (!allowed) violations.push(`${file.path} imports ${ref.specifier} (webview code may import src/common, and only types from src/protocol and messages.ts)`);
        continue;
      }
      const engineViolation = engineImportViolation(file, fromLayer, ref, target);
      if (engineViolation) violations.push(engineViolation);
      const toLayer = layerOf(`${target}/`) ?? layerOf(target);
      if (isCommon && toLayer === 'protocol' && !ref.typeOnly) {
        violations.push(`${file.path} imports ${ref.specifier} by value (the common layer takes only types from protocol)`);
        continue;
      }
      if (!fromLayer || !toLayer || fromLayer === toLayer) continue;
      if (RANK[toLayer]! >= RANK[fromLayer]!) violations.push(`${file.path} (${fromLayer}) imports ${ref.specifier} (${toLayer})`);
    }
  }
  return violations;
}

/** Import circles among the given files (strongly connected components of their relative imports), each sorted. */
export function importCircles(files: SourceFile[]): string[][] {
  const known = new Set(files.map((f) => f.path));
  const resolveImport = (from: string, specifier: string) => {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    return [base, `${base}.ts`, `${base}/index.ts`].find((candidate) => known.has(candidate));
  };
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(file).filter((ref) => ref.specifier.startsWith('.')).map((ref) => resolveImport(file.path, ref.specifier));
    edges.set(file.path, targets.filter((t): t is string => t !== undefined));
  }
  // Tarjan's algorithm: one depth-first walk, each component popped off the stack when its root is done.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (edges.get(node) ?? []).includes(node)) circles.push(component.sort());
  };
  for (const file of files) if (!index.has(file.path)) connect(file.path);
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

function collect(dir: string, root: string, out: SourceFile[] = []): SourceFile[] {
  let entries: string[];
  try {
    entries = readdirSync(path.join(root, dir));
  } catch {
    return out;
  }
  for (const name of entries) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) collect(rel, root, out);
    else if (/\.(ts|tsx|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) out.push({ path: rel, text: readFileSync(path.join(root, rel), 'utf8') });
  }
  return out;
}

const root = path.resolve(__dirname, '../..');

describe('layering guard', () => {

  it('the source tree respects the layers', () => {
    const files = [...collect('src', root), ...collect('webview-ui', root)];
    assert.ok(files.length > 10, 'the guard must see the sources');
    assert.deepEqual(layeringViolations(files), []);
  });

  it('catches a schema module importing zod by value instead of through src/protocol/zod.ts', () => {
    const v = layeringViolations([
      { path: 'src/engine/run/a.ts', text: "import { z } from 'zod';" },
      { path: 'src/engine/run/b.ts', text: "import type { z } from 'zod';" },
      { path: 'src/protocol/zod.ts', text: "import { z } from 'zod';" },
    ]);
    assert.deepEqual(v, ['src/engine/run/a.ts imports zod by value (build schemas with the z of src/protocol/zod.ts, which configures it)']);
  });

  it('catches vscode imported below the extension layer', () => {
    const v = layeringViolations([{ path: 'src/engine/run/x.ts', text: "import * as vscode from 'vscode';" }]);
    assert.deepEqual(v, ['src/engine/run/x.ts imports vscode']);
  });

  it('catches a lower layer importing a higher one, in every import form', () => {
    const v = layeringViolations([
      { path: 'src/protocol/a.ts', text: "import { x } from '../config/schema';" },
      { path: 'src/config/b.ts', text: "export { y } from '../agents/registry';" },
      { path: 'src/agents/c.ts', text: "const s = require('../engine/store/store');" },
      { path: 'src/engine/run/d.ts', text: "const m = await import('../../cli/program');" },
      { path: 'src/cli/e.ts', text: "import '../extension/extension';" },
    ]);
    assert.equal(v.length, 5, v.join('\n'));
  });

  it('fails on a src/ folder that no rule covers, and on a file directly in src/', () => {
    const v = layeringViolations([
      { path: 'src/newthing/a.ts', text: "import { x } from '../engine/tasks';" },
      { path: 'src/loose.ts', text: '' },
      { path: 'src/engine/run/b.ts', text: '' },
    ]);
    assert.deepEqual(v, [
      'src/loose.ts (a file directly in src/) is covered by no layering rule: give it a rank in RANK',
      'src/newthing/ is covered by no layering rule: give it a rank in RANK',
    ]);
  });

  it('puts bin above the three front ends, which still may not import each other', () => {
    const ok = layeringViolations([
      { path: 'src/bin/caesar.ts', text: "import { runCli } from '../cli/program'; import { serveChannel } from '../mcp/channel/server'; import { x } from '../engine/tasks';" },
    ]);
    assert.deepEqual(ok, []);
    const bad = layeringViolations([
      { path: 'src/cli/a.ts', text: "import { serveOrchestrator } from '../mcp/orchestrator/server';" },
      { path: 'src/mcp/b.ts', text: "import { runCli } from '../cli/program';" },
      { path: 'src/extension/c.ts', text: "import { x } from '../mcp/install';" },
      { path: 'src/mcp/d.ts', text: "import { x } from '../bin/mcp-commands';" },
      { path: 'src/engine/tasks/e.ts', text: "import '../../bin/caesar';" },
    ]);
    assert.equal(bad.length, 5, bad.join('\n'));
  });

  it('allows downward and same-layer imports', () => {
    const v = layeringViolations([
      { path: 'src/engine/store/a.ts', text: "import { x } from '../../protocol'; import { y } from './store'; import { z } from '../../agents/types';" },
      { path: 'src/extension/b.ts', text: "import * as vscode from 'vscode'; import { TaskStore } from '../engine/tasks';" },
    ]);
    assert.deepEqual(v, []);
  });

  it('keeps the common layer browser-safe: no node: module, no package, only types from protocol', () => {
    const ok = layeringViolations([
      { path: 'src/common/a.ts', text: "import type { ProtocolEvent } from '../protocol'; import { formatDuration } from './format';" },
    ]);
    assert.deepEqual(ok, []);
    const bad = layeringViolations([
      { path: 'src/common/a.ts', text: "import * as path from 'node:path';" },
      { path: 'src/common/b.ts', text: "import { z } from 'zod';" },
      { path: 'src/common/c.ts', text: "import { EventSchema } from '../protocol';" },
      { path: 'src/common/d.ts', text: "import { TaskStore } from '../engine/tasks';" },
    ]);
    assert.equal(bad.length, 4, bad.join('\n'));
  });

  it('lets webview code import the common layer by value', () => {
    const ok = layeringViolations([
      { path: 'webview-ui/timeline/rows.ts', text: "import { foldTaskView } from '../../src/common/task-view'; import { formatDuration } from '../../src/common/format';" },
    ]);
    assert.deepEqual(ok, []);
  });

  it('lets webview code import only types from protocol and the message contract', () => {
    const ok = layeringViolations([
      { path: 'webview-ui/timeline/main.ts', text: "import type { ProtocolEvent } from '../../src/protocol'; import type { ToWebview } from '../../src/extension/timeline/messages'; import './style.css';" },
    ]);
    assert.deepEqual(ok, []);
    const bad = layeringViolations([
      { path: 'webview-ui/timeline/main.ts', text: "import { parseEvent } from '../../src/protocol'; import type { TaskStore } from '../../src/engine/store';" },
    ]);
    assert.equal(bad.length, 2, bad.join('\n'));
  });

  it('keeps the engine in rooms: no loose file in src/engine/, every room ranked', () => {
    const v = layeringViolations([
      { path: 'src/engine/index.ts', text: '' },
      { path: 'src/engine/loose.ts', text: '' },
      { path: 'src/engine/attic/old.ts', text: '' },
      { path: 'src/engine/run/fine.ts', text: '' },
    ]);
    assert.deepEqual(v, [
      'src/engine/attic/ is a room without a rank: give it one in ENGINE_RANK',
      'src/engine/loose.ts sits directly in src/engine/: put it in the room its work belongs to',
    ]);
  });

  it('lets a room import the rooms below it, and fails an upward import between rooms in every form', () => {
    const ok = layeringViolations([
      { path: 'src/engine/run/a.ts', text: "import { x } from '../git/git'; import { y } from '../store/store'; import { z } from './finalize';" },
      { path: 'src/engine/tasks/b.ts', text: "import { x } from '../run/supervisor'; import { y } from '../launch/delegate';" },
    ]);
    assert.deepEqual(ok, []);
    const bad = layeringViolations([
      { path: 'src/engine/store/a.ts', text: "import { x } from '../git/git';" },
      { path: 'src/engine/git/b.ts', text: "import type { Y } from '../run/supervisor';" },
      { path: 'src/engine/process/c.ts', text: "const m = require('../acp/session');" },
      { path: 'src/engine/run/d.ts', text: "export { z } from '../tasks';" },
      { path: 'src/engine/resolve/e.ts', text: "import { w } from '../launch/delegate';" },
    ]);
    assert.equal(bad.length, 5, bad.join('\n'));
    assert.match(bad[0]!, /src\/engine\/store\/a\.ts \(engine\/store\) imports \.\.\/git\/git \(engine\/git\): rooms import downward only/);
  });

  it('makes the front ends come in through engine/tasks, unless a comment above the import says why', () => {
    const ok = layeringViolations([
      { path: 'src/cli/a.ts', text: "import { TaskStore } from '../engine/tasks'; import type { Placement } from '../engine/run/isolation';" },
      { path: 'src/bin/b.ts', text: "import { superviseTask } from '../engine/tasks/supervise';" },
      {
        path: 'src/bin/c.ts',
        text: "// Straight to the launch room, not through engine/tasks: the loader may load nothing else before the CLI.\nimport { prestart } from '../engine/launch/supervisor-process';",
      },
    ]);
    assert.deepEqual(ok, []);
    const bad = layeringViolations([
      { path: 'src/cli/a.ts', text: "import { TaskStore } from '../engine/store/store';" },
      { path: 'src/extension/b.ts', text: "import { runGitNeutral } from '../engine/git/git';" },
      { path: 'src/mcp/c.ts', text: "// a comment that gives no reason\nimport { readJsonFile } from '../engine/store/atomic';" },
      { path: 'src/bin/d.ts', text: "const s = require('../engine/run/supervisor');" },
    ]);
    assert.equal(bad.length, 4, bad.join('\n'));
    assert.match(bad[0]!, /an inner room of the engine: go through engine\/tasks/);
  });

  it('finds no import circle in src/, and finds one through a type-only or a dynamic import', () => {
    const files = collect('src', root);
    assert.deepEqual(importCircles(files), []);
    const circles = importCircles([
      { path: 'src/agents/demo/a.ts', text: "void import('./b').then(() => 0);" },
      { path: 'src/agents/demo/b.ts', text: "import type { T } from './a';" },
      { path: 'src/extension/c.ts', text: "import { x } from './d';" },
      { path: 'src/extension/d.ts', text: "import type { Y } from './e';" },
      { path: 'src/extension/e/index.ts', text: "import { x } from '../c';" },
      { path: 'src/extension/f.ts', text: "import { x } from './c';" },
    ]);
    assert.deepEqual(circles, [
      ['src/agents/demo/a.ts', 'src/agents/demo/b.ts'],
      ['src/extension/c.ts', 'src/extension/d.ts', 'src/extension/e/index.ts'],
    ]);
  });
});
