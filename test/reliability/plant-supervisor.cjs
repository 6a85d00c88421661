// Plants a FIFO at a task file before the real supervisor starts, as a hostile agent or repository could: used as
// CAESAR_SUPERVISOR_JS. The file to plant is CAESAR_TEST_PLANT_FIFO (e.g. events.jsonl), the bundle to run
// CAESAR_TEST_REAL_SUPERVISOR; the arguments are `supervise <taskDir>`.
const { execFileSync, spawnSync } = require('node:child_process');
const { rmSync } = require('node:fs');
const path = require('node:path');

const taskDir = process.argv[process.argv.length - 1];
const planted = path.join(taskDir, process.env.CAESAR_TEST_PLANT_FIFO);
rmSync(planted, { force: true });
execFileSync('mkfifo', [planted]);
const run = spawnSync(process.execPath, [process.env.CAESAR_TEST_REAL_SUPERVISOR, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
