/*
 * acp/ — an agent driven over the Agent Client Protocol: the session (initialize, session/new, prompt, cancel), the
 * translation of its updates into OACP events, permission requests turned into questions and the policy that answers
 * some of them, and the file reads and writes the agent asks the client for, served inside the task's workspace only.
 * Rooms above import its files directly; this index lists them.
 */
export * from './permission-broker';
export * from './permissions';
export * from './session';
export * from './translator';
export * from './workspace-fs';
