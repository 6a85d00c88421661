// The launcher suite, as scripts/test.mjs runs it: a real one-node Slurm cluster (munged, slurmctld, slurmd, started by
// scripts/slurm-cluster.sh) and the tests, all inside ONE loopback-only network namespace, so the jobs — and the
// agents they start — reach nothing but 127.0.0.1 (the fake model servers). The daemons are stopped afterwards, pass
// or fail. When it cannot run here it says "NOT RUN: <reason>" and exits 77 (test/support/not-run.mjs; under CI, 1).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mochaHonestyFlags, refuseNarrowingUnderCi } from '../support/ci-guard.mjs';
import { missingPackageReason, suiteNotRun } from '../support/not-run.mjs';
const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '..', '..');

// File names as arguments run part of the suite: refused under CI=true (`--bench` is the benchmark, not the tests).
refuseNarrowingUnderCi([], { args: process.argv.slice(2).filter((a) => a !== '--bench'), argsWhat: 'test/launch/run.mjs' });

const skip = suiteNotRun;

const missing = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel'].filter((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0);
if (missing.length) skip(missingPackageReason(['slurm-wlm', 'munge'], `Slurm (${missing.join(', ')} missing)`));
if (process.getuid?.() !== 0) skip('the one-node cluster runs its daemons as root (munged as munge): run as root');
const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) skip(`cannot create a loopback-only network namespace (unshare -n + ip): ${probe.error?.message ?? probe.stderr.trim()}`);

const scratch = mkdtempSync(join(tmpdir(), 'caesar-slurm-'));
// `--bench`: the Slurm benchmark (bench/slurm.bench.ts) against the same cluster instead of the tests.
const bench = process.argv[2] === '--bench';
const files = process.argv.slice(2).length && !bench ? process.argv.slice(2) : ['test/launch/*.live.ts'];
const mocha = join(projectRoot, 'node_modules', '.bin', 'mocha');
// glibc's getaddrinfo (AI_ADDRCONFIG, which Slurm uses) resolves nothing while the namespace has only 127.0.0.1: a
// second loopback address on lo makes it count as configured. Nothing leaves the namespace either way.
const script = [
  'set -e',
  'ip link set lo up',
  'ip addr add 127.0.0.2/8 dev lo',
  `trap '${join(projectRoot, 'scripts', 'slurm-cluster.sh')} stop ${scratch}' EXIT`,
  `started=$(${JSON.stringify(join(projectRoot, 'scripts', 'slurm-cluster.sh'))} start ${JSON.stringify(scratch)})`,
  'eval "$started"',
  'echo "slurm: $(sinfo --noheader --format="%P %t %c CPUs")"',
  bench
    ? `BENCH_ONLY=slurm "${join(projectRoot, 'node_modules', '.bin', 'tsx')}" bench/run.ts`
    : `"${mocha}" --no-config --require tsx/cjs --extension ts --timeout 420000 --reporter spec --require ${JSON.stringify(join(projectRoot, 'test', 'support', 'not-run-hooks.ts'))} ${mochaHonestyFlags().join(' ')} ${files.join(' ')}`,
].join('\n');
const result = spawnSync('unshare', ['-n', 'bash', '-c', script], { cwd: projectRoot, stdio: 'inherit', env: { ...process.env, CAESAR_SLURM_SCRATCH: scratch } });
if (result.status === 0 && !process.env.CAESAR_KEEP_LIVE) rmSync(scratch, { recursive: true, force: true });
else if (result.status !== 0) console.log(`the cluster's logs: ${join(scratch, 'log')}`);
process.exit(result.status ?? 1);
