import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * Issue 22, item 1: every git process Caesar starts goes through runGit (src/engine/git.ts), which adds
 * src/engine/git/git-safety.ts's options (no planted hook, fsmonitor, pager, external diff or filter runs). This guard
 * reads every file of src/ and fails on a git started any other way:
 *  - a call whose first argument is the program `git` (`spawn('git', …)`, `execFile("git")`, `execa(\`git\`)`,
 *    `/usr/bin/git`), or a shell command line starting with `git ` (`exec('git status')`);
 *  - simple-git (a dependency of the package, never to be used: it would build its own command lines);
 *  - child_process in a file not reviewed below: a new process starter must be looked at (does it run git?).
 */
const GIT_HOMES = new Set(['src/engine/git/git.ts', 'src/engine/git/git-safety.ts']);
/** Files that start processes and were reviewed: none of them runs git (agents, setup commands, supervisors, probes). */
const REVIEWED_PROCESS_STARTERS = new Set([
  'src/engine/git/git.ts',
  'src/engine/git/git-safety.ts',
  'src/engine/resolve/agent-catalogue.ts', // runs an agent's `--version`
  'src/engine/process/spawn.ts', // runs the agent
  'src/engine/git/workshop.ts', // `[worktree] setup` commands and `cp -Rc`
  'src/engine/launch/supervisor-process.ts', // node supervisors
  'src/engine/launch/warm-client.ts', // the idle (warm) node supervisor
  'src/cli/commands/doctor-acp.ts', // an ACP agent's probe
  'src/engine/cluster/slurm.ts', // sbatch, squeue, scancel, sinfo
  'src/engine/git/apply-journal.ts', // sync -f (flush before the journal is committed)
  'src/engine/sandbox/preflight.ts', // bwrap's probe (can a sandbox run here)
]);

interface SourceFile {
  path: string;
  text: string;
}

/** The program git itself, by name or path. */
function isGitProgram(text: string): boolean {
  return /^(.*[/\\])?git(\.exe)?$/.test(text);
}

/** child_process's functions, which also take a whole shell command line (`exec('git status')`). */
const PROCESS_FUNCTIONS = new Set(['exec', 'execSync', 'spawn', 'spawnSync', 'execFile', 'execFileSync', 'fork']);

function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

function startsGit(call: ts.CallExpression): boolean {
  const first = literalText(call.arguments[0]);
  if (first === undefined) return false;
  return isGitProgram(first) || (PROCESS_FUNCTIONS.has(calleeName(call) ?? '') && /^\s*(\S*[/\\])?git\s/.test(first));
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (!node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text;
  return undefined;
}

function isModuleSpecifier(node: ts.Node): boolean {
  return ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent) || ts.isExternalModuleReference(node.parent);
}

function importsChildProcess(text: string): boolean {
  return /(['"])(node:)?child_process\1/.test(text);
}

export function gitBypasses(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const at = (node: ts.Node) => `${file.path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const startsProcesses = importsChildProcess(file.text) && !GIT_HOMES.has(file.path);
    const visit = (node: ts.Node) => {
      // In a file that starts processes, the program name held in a variable (`const GIT = 'git'; spawn(GIT)`).
      if (startsProcesses && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && isGitProgram(node.text) && !ts.isCallExpression(node.parent) && !isModuleSpecifier(node)) {
        found.push(`${at(node)} names the git program in a file that starts processes: run git through runGit`);
      }
      if (ts.isCallExpression(node) && !GIT_HOMES.has(file.path)) {
        if (startsGit(node)) found.push(`${at(node)} starts git without runGit: ${node.getText(source).slice(0, 80)}`);
      }
      const specifier =
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
          ? node.moduleSpecifier.text
          : ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
            ? literalText(node.arguments[0])
            : undefined;
      if (specifier === 'simple-git') found.push(`${at(node)} imports simple-git: run git through runGit (src/engine/git.ts)`);
      if ((specifier === 'child_process' || specifier === 'node:child_process') && !REVIEWED_PROCESS_STARTERS.has(file.path)) {
        found.push(`${at(node)} imports child_process: if it runs git, use runGit; then add the file to REVIEWED_PROCESS_STARTERS`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function collect(dir: string, root: string, out: SourceFile[] = []): SourceFile[] {
  for (const name of readdirSync(path.join(root, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) collect(rel, root, out);
    else if (/\.(ts|tsx|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) out.push({ path: rel, text: readFileSync(path.join(root, rel), 'utf8') });
  }
  return out;
}

describe('git bypass guard (every git call goes through runGit)', () => {
  const root = path.resolve(__dirname, '../..');

  it('no file of src/ starts git except through runGit', () => {
    const files = collect('src', root);
    assert.ok(files.some((f) => f.path === 'src/engine/git/git.ts') && files.length > 50, 'the guard must see the sources');
    assert.deepEqual(gitBypasses(files), []);
  });

  it('catches git started directly, in every form', () => {
    const bypass = (text: string) => gitBypasses([{ path: 'src/engine/reviewed.ts', text }]);
    assert.equal(bypass(`import { spawn } from 'node:child_process';\nspawn('git', ['status']);`).length, 2, 'the call and the unreviewed import');
    assert.match(bypass(`cp.execFile("git", ["diff"], cb);`)[0] ?? '', /reviewed\.ts:1 starts git without runGit: cp\.execFile\("git"/);
    assert.equal(bypass('execFileSync(`git`, args);').length, 1);
    assert.equal(bypass(`spawnSync('/usr/bin/git', ['apply']);`).length, 1);
    assert.equal(bypass(`exec('git status --porcelain');`).length, 1);
    assert.equal(bypass('exec(`git diff ${base}`);').length, 1);
    assert.equal(bypass(`run('git', ['worktree', 'add']);`).length, 1, 'a helper of its own is a bypass too');
    const held = gitBypasses([{ path: 'src/engine/process/spawn.ts', text: `import { spawn } from 'node:child_process';\nconst GIT = 'git';\nspawn(GIT, ['status']);` }]);
    assert.deepEqual(gitBypasses([{ path: 'src/engine/process/spawn.ts', text: `import { spawn } from 'node:child_process';\nimport { runGit } from './git';` }]), [], 'importing the git module is no bypass');
    assert.match(held.join('\n'), /spawn\.ts:2 names the git program in a file that starts processes/, 'the name held in a variable, in a reviewed file');
    assert.match(bypass(`import simpleGit from 'simple-git';`)[0] ?? '', /imports simple-git/);
    assert.match(bypass(`const git = require('simple-git');`)[0] ?? '', /imports simple-git/);
    assert.match(bypass(`const cp = require('child_process');`)[0] ?? '', /imports child_process/);
  });

  it('has no false positive on the word git in data and messages', () => {
    const text = [
      `const by = z.enum(['git', 'declaration']);`,
      `log.info('git is not installed');`,
      `throw new Error('git apply failed');`,
      `path.join(root, '.git');`,
      `format('according to git');`,
      `runGit(['status'], { cwd });`,
      `lines.push(x === 'git' ? 'a' : 'b');`,
    ].join('\n');
    assert.deepEqual(gitBypasses([{ path: 'src/cli/x.ts', text }]), []);
  });

  it('lets the git module itself start git', () => {
    assert.deepEqual(gitBypasses([{ path: 'src/engine/git/git.ts', text: `import { spawn } from 'node:child_process';\nspawn('git', args);` }]), []);
  });
});
