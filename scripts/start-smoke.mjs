// Suite entry for scripts/test.mjs: runs `npm start -- --smoke` (which starts the editor inside a loopback-only
// network namespace where it can), so the README's first command is proven on every run. Exit 77 (SKIPPED) where the
// namespace or the editor is unavailable.
import { spawnSync } from 'node:child_process';
import { missingPieces } from './setup-editor.mjs';

const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.log(`SKIPPED: cannot create a loopback-only network namespace (unshare -n): ${probe.error?.message ?? probe.stderr.trim()}`);
  process.exit(77);
}
const missing = missingPieces().filter((m) => !m.includes('chromium'));
if (missing.length) {
  console.log(`SKIPPED: ${missing.join('; ')}`);
  process.exit(77);
}
const run = spawnSync(process.execPath, ['scripts/start.mjs', '--smoke'], { stdio: 'inherit' });
process.exit(run.status ?? 1);
