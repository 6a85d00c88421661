/*
 * run/ — one task's life under its supervisor: where the agent works (isolation), the files laid down for it and
 * restored after (lay-down), the return channel's coordinates, the one writer of events.jsonl and of state.json, the
 * agent's outbox relayed, questions relayed and expired, the report read and validated, and the conclusion (git's
 * verdict, result.json, finalize) — also for a task whose supervisor died (conclude).
 * Rooms above import its files directly; this index lists them.
 */
export * from './agent-outbox';
export * from './channel-launcher';
export * from './conclude';
export * from './confinement';
export * from './events-writer';
export * from './finalize';
export * from './isolation';
export * from './lay-down';
export * from './questions-relay';
export * from './report';
export * from './run-conclusion';
export * from './state-writer';
export * from './supervisor';
export * from './task-document';
