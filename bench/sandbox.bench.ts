/**
 * What the sandbox (src/engine/sandbox/, issue 21) adds to a task: the same whole task, `caesar run` with a tiny
 * [[agent]] (/bin/sh writes one file and its report, exits at once) in a 2k-file repository, sandboxed
 * (CAESAR_SANDBOX=required) and not (off), interleaved, with the ratio and the added milliseconds (median). Beside
 * it, the bare cost of bubblewrap: spawning `/bin/true` inside the task's kind of bwrap command versus directly.
 * A cut network with the endpoint as a loopback address (the bridge) and as a host name (the bridge and the filtering
 * proxy), and the proxy's own start (its bundle loaded in a fresh node) over a bare node start.
 * Target (issue 21): ≤ 50 ms added per task, median.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { locateBwrap } from '../src/engine/sandbox';
import { benchDir, benchHome, cleanupBench, figures, git, interleave, loadNote, makeBenchRepo, ratio, remember, runsFromEnv, spread } from './lib';
import { bundleCli } from './task.bench';
import { endIdleSupervisors, waitForIdle, warmFolder } from './task-warm';

const run = promisify(execFile);
/** `node -e PROXY_START bundle dir`: require dist/host-proxy.js, start a proxy on a socket in dir, close it. */
const PROXY_START = `const [bundle, dir] = process.argv.slice(1); require(bundle).startHostProxy(dir + '/p.sock', [{ host: 'localhost', port: 9 }]).then((p) => p.close());`;
const REPORT = JSON.stringify({ protocol: 'caesar.report/v1', status: 'success', summary: 'ok', changes: [{ path: 'bench.txt', action: 'created' }] });

export async function benchSandbox(): Promise<Record<string, number | string>> {
  const bwrap = locateBwrap();
  if (!bwrap) return { skipped: 'no bwrap on PATH' };
  const runs = runsFromEnv(9);
  const cli = await bundleCli();
  const proxyBundle = path.join(path.dirname(cli), 'host-proxy.js');
  const proxyDir = remember(benchDir('caesar-bench-proxy-'));
  const out: Record<string, number | string> = { runs, bwrap, load_before: loadNote() };
  // With the warm supervisor (issue 27) waiting before each run, in a folder of the bench's own.
  const env: NodeJS.ProcessEnv = { ...process.env, CAESAR_CLI_JS: cli, CAESAR_COMPILE_CACHE: remember(benchDir('caesar-bench-cache-')), CAESAR_WARM_SUPERVISOR: '1', CAESAR_WARM_DIR: warmFolder() };
  const repo = makeBenchRepo(2000);
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  const script = `echo done > bench.txt; printf '%s' '${REPORT}' > "$CAESAR_REPORT_PATH"`;
  // The agent in the user's own layer (a HOME of the bench's own): a repository's file naming programs needs trust.
  // allow_hosts: a task whose network is cut (--network off) gets the model-endpoint bridge (socat inside, issue 21).
  const home = (allow: string) => benchHome(`[sandbox]\nallow_hosts = ["${allow}"]\n[[agent]]\nid = "quick"\nbin = "/bin/sh"\nargs = ["-c", ${JSON.stringify(script)}, "{{prompt}}"]\n`);
  env.HOME = home('127.0.0.1:9999'); // nothing listens there: the bridge only binds it inside (below 1024 it cannot)
  // The endpoint as a host name: the cut network gets the filtering proxy (host-proxy.ts) on top of the bridge.
  const namedHome = home('localhost:9999');
  let lastTask = '';
  const task = (mode: string, network = 'on', taskHome = env.HOME) => ({
    prepare: async () => void (await waitForIdle(cli, env)),
    run: async () => {
      const { stdout } = await run(process.execPath, [cli, 'run', 'write bench.txt', '--agent', 'quick', '--isolation', 'worktree', '--mode', 'write', '--network', network, '--json'], { cwd: repo, env: { ...env, HOME: taskHome, CAESAR_SANDBOX: mode }, maxBuffer: 1 << 24 });
      const result = JSON.parse(stdout) as { task_id: string; status: string; diff?: { files: unknown[] } };
      if (result.status !== 'succeeded' || result.diff?.files.length !== 1) throw new Error(`task did not succeed: ${stdout.slice(0, 500)}`);
      lastTask = result.task_id;
    },
    cleanup: () => {
      git(repo, 'worktree', 'remove', '--force', path.join(repo, '.caesar', 'wt', lastTask));
      git(repo, 'branch', '-q', '-D', `caesar/${lastTask}`);
      rmSync(path.join(repo, '.caesar', 'tasks', lastTask), { recursive: true, force: true });
    },
  });
  const bwrapArgs = ['--ro-bind', '/', '/', '--tmpfs', '/tmp', '--bind', repo, repo, '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--share-net', '--die-with-parent', '--new-session', '--'];
  try {
    const m = await interleave(
      {
        task_sandboxed: task('required'),
        task_unsandboxed: task('off'),
        task_sandboxed_network_cut: task('required', 'off'),
        task_sandboxed_network_cut_named: task('required', 'off', namedHome),
        // What a supervisor pays to load the proxy bundle and start a proxy (then close it), over a bare node start.
        proxy_start_in_node: { run: () => run(process.execPath, ['-e', PROXY_START, proxyBundle, proxyDir]).then(() => undefined) },
        node_bare: { run: () => run(process.execPath, ['-e', '0']).then(() => undefined) },
        spawn_true_in_bwrap: { run: () => run(bwrap, [...bwrapArgs, '/bin/true']).then(() => undefined) },
        spawn_true_bare: { run: () => run('/bin/true', []).then(() => undefined) },
      },
      runs,
      { warmup: true },
    );
    for (const [name, measured] of Object.entries(m)) Object.assign(out, figures(name, measured, false));
    out.ratio_task_sandboxed_to_unsandboxed = ratio(m.task_sandboxed!, m.task_unsandboxed!);
    out.task_added_ms_median = spread(m.task_sandboxed!.wall).median - spread(m.task_unsandboxed!.wall).median;
    out.task_added_ms_paired_median = pairedMedian(m.task_sandboxed!.wall, m.task_unsandboxed!.wall);
    out.network_cut_added_ms_paired_median = pairedMedian(m.task_sandboxed_network_cut!.wall, m.task_sandboxed!.wall);
    out.named_network_cut_added_ms_paired_median = pairedMedian(m.task_sandboxed_network_cut_named!.wall, m.task_sandboxed_network_cut!.wall);
    out.proxy_start_added_ms_paired_median = pairedMedian(m.proxy_start_in_node!.wall, m.node_bare!.wall);
    out.bwrap_added_ms_median = spread(m.spawn_true_in_bwrap!.wall).median - spread(m.spawn_true_bare!.wall).median;
    out.bwrap_added_ms_paired_median = pairedMedian(m.spawn_true_in_bwrap!.wall, m.spawn_true_bare!.wall);
    out.load_after = loadNote();
  } finally {
    endIdleSupervisors(cli);
    cleanupBench();
  }
  return out;
}

/** The median of the per-round differences (each round runs both cases back to back: a loaded moment hits both). */
function pairedMedian(a: number[], b: number[]): number {
  return spread(a.map((value, i) => value - b[i]!)).median;
}
