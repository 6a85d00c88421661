import * as path from 'node:path';
import { requireWithCodeCache } from './compile-cache';

/**
 * The process entry of dist/supervisor.js, the task supervisor delegate() starts (`supervisor.js supervise <taskDir>`).
 * Only a loader: it runs dist/supervisor-main.js with V8's compiled code cached between tasks (compile-cache.ts), since
 * compiling the bundle is a large part of a supervisor's start.
 */
requireWithCodeCache(path.join(__dirname, 'supervisor-main.js'));
