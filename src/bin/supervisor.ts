import * as path from 'node:path';
// Straight to the launch room, not through engine/tasks: this loader runs before any bundle is loaded and may use
// only Node's built-ins and this one module (the delay below).
import { idleLoadDelayMs } from '../engine/launch/warm-common';
import { requireWithCodeCache } from './compile-cache';

/**
 * The process entry of dist/supervisor.js, the task supervisor delegate() starts (`supervisor.js supervise <taskDir>`).
 * Only a loader: it runs dist/supervisor-main.js with V8's compiled code cached between tasks (compile-cache.ts), since
 * compiling the bundle is a large part of a supervisor's start. An idle supervisor loads it after a delay
 * (warm-common.ts, idleLoadDelayMs).
 */
const load = () => requireWithCodeCache(path.join(__dirname, 'supervisor-main.js'));
// The user's next idle supervisor (`supervisor.js idle`) loads a little later, off the task that started it.
if (process.argv[2] === 'idle') setTimeout(load, idleLoadDelayMs());
else load();
