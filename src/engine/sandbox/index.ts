/*
 * sandbox/ — what an agent's process may see and reach. Today: its environment (agent-env: the minimal policy keeps
 * the caller's secrets out). The operating-system sandbox around the agent's process tree (bubblewrap on Linux: what
 * it may write, read and connect to) belongs here too.
 * Rooms above import its files directly; this index lists them.
 */
export * from './agent-env';
