/*
 * resolve/ — what a delegation becomes before anything runs: the agent catalogue (built-in adapters, configured
 * agents, what is installed and allowed) and the resolution of a request plus the layered configuration into a launch
 * draft, or a refusal that says why.
 * Rooms above import its files directly; this index lists them.
 */
export * from './agent-catalogue';
export * from './resolve';
