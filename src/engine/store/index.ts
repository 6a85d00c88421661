/*
 * store/ — the task directory on disk, `.caesar/tasks/<id>/`, and what every process reads from it: JSON read back
 * under a size cap (atomic), the launch spec, the store of task views and its change events, following a file by
 * byte offset (tail), the seals that tell Caesar's records from anyone else's (record-key, record-seal, sealed-read), the requests other processes file for a supervisor (cancel, answers), the one-writer lock and the
 * max_parallel slots. The lowest room: it knows no git and runs no agent.
 * Rooms above import its files directly; this index lists them.
 */
export * from './atomic';
export * from './launch-spec';
export * from './record-key';
export * from './record-seal';
export * from './sealed-read';
export * from './sealed-events';
export * from './requests';
export * from './slots';
export * from './store';
export * from './tail';
export * from './writer-lock';
