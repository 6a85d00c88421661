/*
 * sandbox/ — what an agent's process may see and reach (issue 21). Every agent process tree runs inside bubblewrap
 * on Linux, so what the agent may write is a fact of the kernel, not a wish of its CLI; and its environment keeps
 * the caller's secrets out (agent-env: the minimal policy).
 * - preflight.ts: can bwrap run here, and if not, the cause and its fix (cached per process; `caesar doctor`);
 * - policy.ts: the mounts of one task (what is read-only, writable, hidden), agent-dirs.ts: each CLI's own state;
 * - bwrap.ts: the bwrap command line; sandbox.ts: the decision per task, the finding when a task runs unconfined, and
 *   after the run, taking the agent's report files back from its view of the task folder;
 * - network.ts: whether a task's network is cut (the model endpoints allowed, agent-endpoints.ts declares them per
 *   adapter), network-bridge.ts: the endpoints carried into the empty namespace (a relay outside, socat inside);
 * - private-objects.ts: a write task's commits into a private object store, brought back after the run.
 * Rooms above import its files directly; this index lists them.
 */
export * from './agent-env';
export * from './sandbox';
