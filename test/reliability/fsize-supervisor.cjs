// The real supervisor under a file-size limit (RLIMIT_FSIZE, set by prlimit, no privileges needed): a write past
// the limit fails with EFBIG, as a write on a full disk fails with ENOSPC. Node ignores SIGXFSZ, so the write errors.
// Used as CAESAR_SUPERVISOR_JS; the bundle to run is CAESAR_TEST_REAL_SUPERVISOR, the limit CAESAR_TEST_FSIZE (bytes).
const { spawnSync } = require('node:child_process');

const real = process.env.CAESAR_TEST_REAL_SUPERVISOR;
const limit = process.env.CAESAR_TEST_FSIZE;
const run = spawnSync('prlimit', [`--fsize=${limit}`, '--', process.execPath, real, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
