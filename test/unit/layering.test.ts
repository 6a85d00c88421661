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
 */
const RANK: Record<string, number> = { base: -1, protocol: 0, common: 0.5, config: 1, agents: 2, engine: 3, mcp: 4, cli: 4, extension: 4, bin: 5 };
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
}

function importsOf(file: SourceFile): ImportRef[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const refs: ImportRef[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? Boolean(node.importClause?.isTypeOnly) : node.isTypeOnly;
      refs.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) {
        refs.push({ specifier: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false });
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
  const violations: string[] = uncoveredSources(files).map((where) => `${where} is covered by no layering rule: give it a rank in RANK`);
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

describe('layering guard', () => {
  const root = path.resolve(__dirname, '../..');

  it('the source tree respects the layers', () => {
    const files = [...collect('src', root), ...collect('webview-ui', root)];
    assert.ok(files.length > 10, 'the guard must see the sources');
    assert.deepEqual(layeringViolations(files), []);
  });

  it('catches a schema module importing zod by value instead of through src/protocol/zod.ts', () => {
    const v = layeringViolations([
      { path: 'src/engine/a.ts', text: "import { z } from 'zod';" },
      { path: 'src/engine/b.ts', text: "import type { z } from 'zod';" },
      { path: 'src/protocol/zod.ts', text: "import { z } from 'zod';" },
    ]);
    assert.deepEqual(v, ['src/engine/a.ts imports zod by value (build schemas with the z of src/protocol/zod.ts, which configures it)']);
  });

  it('catches vscode imported below the extension layer', () => {
    const v = layeringViolations([{ path: 'src/engine/x.ts', text: "import * as vscode from 'vscode';" }]);
    assert.deepEqual(v, ['src/engine/x.ts imports vscode']);
  });

  it('catches a lower layer importing a higher one, in every import form', () => {
    const v = layeringViolations([
      { path: 'src/protocol/a.ts', text: "import { x } from '../config/schema';" },
      { path: 'src/config/b.ts', text: "export { y } from '../agents/registry';" },
      { path: 'src/agents/c.ts', text: "const s = require('../engine/store');" },
      { path: 'src/engine/d.ts', text: "const m = await import('../cli/program');" },
      { path: 'src/cli/e.ts', text: "import '../extension/extension';" },
    ]);
    assert.equal(v.length, 5, v.join('\n'));
  });

  it('fails on a src/ folder that no rule covers, and on a file directly in src/', () => {
    const v = layeringViolations([
      { path: 'src/newthing/a.ts', text: "import { x } from '../engine/store';" },
      { path: 'src/loose.ts', text: '' },
      { path: 'src/engine/b.ts', text: '' },
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
      { path: 'src/engine/e.ts', text: "import '../bin/caesar';" },
    ]);
    assert.equal(bad.length, 5, bad.join('\n'));
  });

  it('allows downward and same-layer imports', () => {
    const v = layeringViolations([
      { path: 'src/engine/a.ts', text: "import { x } from '../protocol'; import { y } from './store'; import { z } from '../agents/types';" },
      { path: 'src/extension/b.ts', text: "import * as vscode from 'vscode'; import { TaskStore } from '../engine/store';" },
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
      { path: 'src/common/d.ts', text: "import { TaskStore } from '../engine/store';" },
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
});
