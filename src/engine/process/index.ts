/*
 * process/ — the agent as a process group: spawning it (raw.log, deadline, cancel), stopping it and sweeping up
 * descendants that escaped its group, the cancel request turned into an abort signal, the first failed write latched
 * (write-fault), and the budgets of the phases after the agent has ended (phase-watchdog).
 * Rooms above import its files directly; this index lists them.
 */
export * from './cancel-watch';
export * from './phase-watchdog';
export * from './process-sweep';
export * from './spawn';
export * from './write-fault';
