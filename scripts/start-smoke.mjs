// Suite entry for scripts/test.mjs: runs `npm start -- --smoke` (which starts the editor inside a loopback-only
// network namespace where it can), so the README's first command is proven on every run. "NOT RUN" (exit 77; under CI,
// a failure) where the namespace or the editor is unavailable.
import { spawnSync } from 'node:child_process';
import { missingPieces } from './setup-editor.mjs';
import { suiteNotRun, writeReport } from '../test/support/not-run.mjs';

const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) suiteNotRun(`cannot create a loopback-only network namespace (unshare -n): ${probe.error?.message ?? probe.stderr.trim()}`);
const missing = missingPieces(undefined, { browser: false });
if (missing.length) suiteNotRun(missing.join('; '));
const run = spawnSync(process.execPath, ['scripts/start.mjs', '--smoke'], { stdio: 'inherit' });
writeReport({ ran: 1, notRun: [] }); // one check: the README's first command, end to end
process.exit(run.status ?? 1);
