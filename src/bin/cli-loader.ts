import * as path from 'node:path';
import { prestartSupervisor } from '../engine/supervisor-process';
import { requireWithCodeCache } from './compile-cache';

/**
 * The process entry of dist/caesar.js: a loader a few KiB in size in front of the `caesar` command line
 * (dist/caesar-main.js, from src/bin/caesar.ts). Two things happen here, before the 1.9 MB bundle is even read, because
 * every `caesar` command pays for loading it (issue 14):
 * - `caesar run` will need a task supervisor, a second Node process: a standby one starts now, so that its start-up
 *   overlaps the CLI's own instead of following it (supervisor-process.ts);
 * - the bundle runs with V8's compiled code cached between runs (compile-cache.ts).
 */
if (process.argv[2] === 'run' && !process.argv.includes('--help') && !process.argv.includes('-h')) prestartSupervisor();
requireWithCodeCache(path.join(__dirname, 'caesar-main.js'));
