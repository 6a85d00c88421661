/**
 * Being a task's supervisor: the use case only `caesar supervise` and the lean supervisor entry run. It has its own
 * door, beside the tasks index, so the editor's bundle and the MCP server do not carry the supervisor and its agent
 * transports.
 */
export { superviseTask } from '../run/supervisor';
export { STANDBY_ANSWER_FD, STANDBY_TAKEN, type StandbyAssignment } from '../launch/supervisor-process';
export { waitIdle } from '../launch/warm-server';
