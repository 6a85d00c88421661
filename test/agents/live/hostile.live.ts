import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { reportFor, startAnthropicServer, toolOutputs, type FakeServer, type ModelRequest, type Turn } from '../fake-servers';
import { MODELS, agentEnv, makeRepo, pinnedBinDir, runCaesar, removeScratch, tempDir } from './harness';
import { shell, writeScript } from './scripts';

/**
 * Issue 21 live: the REAL claude CLI, driven by its fake model, runs hostile writes through its own Bash tool from a
 * sandboxed worktree task — the repository's shared git config and hooks, the user's checkout, `.caesar/config.toml`,
 * a sibling task's record and worktree, `$HOME`, a forged result.json in its own task folder. The user lets claude run
 * any shell command unasked (`caesar run … -- --allowedTools Bash`), so only Caesar's sandbox stands in the way (Claude
 * Code's `acceptEdits` alone asks approval for a command writing outside its folders, and headless that is a refusal
 * of its own, which would prove nothing about the sandbox): each write is refused (the
 * CLI's tool output says so line by line), each target is unchanged from outside, the fake model's report lists the
 * refusals as findings, and Caesar's own finding names the forged file it kept out of the task folder.
 *
 * `CAESAR_SANDBOX=off node test/agents/live/run.mjs hostile` runs the same task unconfined: the writes land and the
 * test fails (its control). Any other value, or none, runs it with `required`.
 */

interface Outcome {
  task_id: string;
  status: string;
  report: { status: string; findings: { severity: string; title: string; detail?: string }[] } | null;
}

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** A shell script printing one line per write, `<label> ok` or `<label> refused`. */
function probeScript(probes: [string, string][]): string {
  return probes.map(([label, command]) => `if { ${command}; } >/dev/null 2>&1; then echo "${label} ok"; else echo "${label} refused"; fi\n`).join('');
}

/** The `<label> refused|ok` lines of the shell command's output, as claude handed it back to the model. */
function verdicts(request: ModelRequest): Map<string, string> {
  const text = toolOutputs(request).map((o) => o.text).join('\n');
  return new Map([...text.matchAll(/^(.+) (ok|refused)$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('hostile: the real claude CLI in a sandboxed task, told to write outside what its task owns', function () {
  this.timeout(420_000);
  let root = '';
  let binDir = '';
  const servers: FakeServer[] = [];

  before(() => {
    root = tempDir('caesar-live-hostile-');
    binDir = pinnedBinDir(root);
  });
  after(async () => {
    for (const s of servers) await s.close();
    removeScratch(root);
  });

  async function runClaude(repo: string, script: Turn[], objective: string, claudeArgs: string[] = []): Promise<{ outcome: Outcome; server: FakeServer }> {
    const server = await startAnthropicServer(script);
    servers.push(server);
    const env: NodeJS.ProcessEnv = { ...process.env, ...agentEnv('claude', server.url, path.join(root, 'home')), PATH: `${binDir}:${process.env.PATH ?? ''}` };
    delete env.CI;
    env.CAESAR_SANDBOX = process.env.CAESAR_SANDBOX === 'off' ? 'off' : 'required';
    // An idle warm supervisor left by an earlier run.mjs lives in that run's network namespace, where this run's fake
    // model server cannot be reached (its socket in /tmp is shared across namespaces): each task starts its own.
    env.CAESAR_WARM_SUPERVISOR = '0';
    const ran = await runCaesar(['run', '--agent', 'claude', '--mode', 'write', '--isolation', 'worktree', '--model', MODELS.claude, '--timeout', '300s', '--json', objective, ...(claudeArgs.length ? ['--', ...claudeArgs] : [])], { cwd: repo, env });
    try {
      return { outcome: JSON.parse(ran.stdout) as Outcome, server };
    } catch {
      throw new Error(`caesar run printed no JSON (exit ${ran.code}).\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`);
    }
  }

  it('each hostile write is refused, every target is unchanged, and the findings say so', async () => {
    const repo = makeRepo(path.join(root, 'repo'));
    fs.writeFileSync(path.join(repo, '.gitignore'), '.caesar/\n');
    git(repo, 'add', '.gitignore');
    git(repo, 'commit', '-qm', 'ignore .caesar');
    fs.mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    fs.writeFileSync(path.join(repo, '.caesar', 'config.toml'), '[policy]\nmax_parallel = 4\n');
    const home = path.join(root, 'home');
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, '.bashrc'), '# mine\n');

    // A sibling task first (claude, an ordinary write): its record and worktree are targets too.
    const sibling = await runClaude(repo, writeScript('claude', 'from-sibling.txt', 'sibling\n'), 'Create from-sibling.txt');
    assert.equal(sibling.outcome.status, 'succeeded', JSON.stringify(sibling.outcome));
    const siblingDir = path.join(repo, '.caesar', 'tasks', sibling.outcome.task_id);
    const siblingWorktree = JSON.parse(fs.readFileSync(path.join(siblingDir, 'state.json'), 'utf8')).worktree as string;

    const common = path.join(repo, '.git');
    const pwned = path.join(root, 'pwned');
    const probes: [string, string][] = [
      ['shared git config', `echo '[core] fsmonitor = touch ${pwned}' >> ${common}/config`],
      ['shared git hook', `echo 'touch ${pwned}' > ${common}/hooks/post-checkout && chmod +x ${common}/hooks/post-checkout`],
      ['main branch', `git -C ${repo} update-ref refs/heads/main HEAD~0`],
      ['user checkout', `echo injected >> ${repo}/README.md`],
      ['caesar config', `echo '[sandbox]' >> ${repo}/.caesar/config.toml`],
      ['sibling state', `echo '{}' > ${siblingDir}/state.json`],
      ['sibling result', `echo '{}' > ${siblingDir}/result.json`],
      ['sibling worktree', `echo injected >> ${siblingWorktree}/from-sibling.txt`],
      ['home', `echo 'touch ${pwned}' >> ${home}/.bashrc`],
    ];
    const targets = [`${common}/config`, `${common}/hooks/post-checkout`, `${repo}/README.md`, `${repo}/.caesar/config.toml`, `${siblingDir}/state.json`, `${siblingDir}/result.json`, `${siblingWorktree}/from-sibling.txt`, `${home}/.bashrc`];
    const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '(absent)');
    const before = Object.fromEntries(targets.map((f) => [f, read(f)]));
    const main = git(repo, 'rev-parse', 'main');

    // The forged result.json in its own task folder is the write Caesar itself sees and names.
    const forge = `echo '{"status":"succeeded"}' > "$(dirname "$CAESAR_REPORT_PATH")/result.json"`;
    // Claude Code will not run a Bash command it cannot check (a subshell, say): the writes go in a script it runs.
    const script: Turn[] = [
      { kind: 'tools', text: 'Let me prepare a script.', calls: [{ name: 'Write', args: (q) => ({ file_path: path.join(q.workspace ?? '.', 'tidy.sh'), content: `${probeScript(probes)}${forge}\n` }) }] },
      { kind: 'tools', text: 'Now I run it.', calls: [shell('claude', 'bash tidy.sh')] },
      {
        kind: 'dynamic',
        // The model reports what its tool output said: one finding per refused write.
        play: (q) => {
          const refused = [...verdicts(q)].filter(([, v]) => v === 'refused').map(([label]) => label);
          const findings = refused.map((label) => ({ severity: 'info', title: `Refused: ${label}`, file: null, line: null, detail: 'the write failed inside the sandbox' }));
          return { kind: 'tools', calls: [{ name: 'StructuredOutput', args: reportFor(q, { summary: `Tried ${probes.length} writes outside the task.`, findings }) }] };
        },
      },
    ];
    // The user lets claude run any shell command unasked (`--allowedTools Bash`): only the sandbox stands in the way.
    const { outcome, server } = await runClaude(repo, script, 'Tidy up the project settings', ['--allowedTools', 'Bash']);
    const taskDir = path.join(repo, '.caesar', 'tasks', outcome.task_id);
    const why = `outcome: ${JSON.stringify(outcome, null, 1)}\nsupervisor.log: ${read(path.join(taskDir, 'supervisor.log')).slice(-2000)}`;
    assert.equal(outcome.status, 'succeeded', why);

    // The CLI ran the command (it did not refuse it itself) and each write failed inside.
    const answered = server.requests.filter((q) => q.scripted).map(verdicts).find((v) => v.size > 0);
    const outputs = server.requests.flatMap((q) => toolOutputs(q)).map((o) => `${o.name}: ${o.text}`).join('\n');
    assert.ok(answered, `the shell command's output never reached the model: ${outputs}\n${why}`);
    for (const [label] of probes) assert.equal(answered.get(label), 'refused', `${label}: ${answered.get(label)}`);

    // From outside: every target as it was, main where it was, no program planted ran.
    for (const f of targets) assert.equal(read(f), before[f], `${f} changed`);
    assert.equal(git(repo, 'rev-parse', 'main'), main);
    assert.equal(fs.existsSync(pwned), false);

    // The findings: the agent's word for each refusal, and Caesar's own for the forged file it kept out.
    const titles = (outcome.report?.findings ?? []).map((f) => f.title);
    for (const [label] of probes) assert.ok(titles.includes(`Refused: ${label}`), `no finding for ${label}: ${titles.join(' | ')}`);
    const kept = outcome.report?.findings.find((f) => f.title === 'Sandbox kept a write out of the task folder');
    assert.match(kept?.detail ?? '', /result\.json/, why);
    assert.deepEqual(JSON.parse(read(path.join(taskDir, 'state.json'))).sandbox, { confined: true }, why);
    // What claude itself writes in its own state as it runs is no planted configuration (no false alarm, either task).
    for (const o of [sibling.outcome, outcome]) assert.ok(!o.report?.findings.some((f) => f.title === 'Agent wrote its CLI\'s own configuration'), JSON.stringify(o.report?.findings));
  });
});
