/*
 * launch/ — how a resolved task comes to run: its task directory written, then its supervisor started (a detached
 * local process, or a standby started ahead that is handed the task). Other launchers (a job system) belong here.
 * Rooms above import its files directly; this index lists them.
 */
export * from './delegate';
export * from './supervisor-process';
