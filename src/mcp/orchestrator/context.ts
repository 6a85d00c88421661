/** What every orchestrator tool works with; one per server process. */
export interface OrchestratorContext {
  /** The caesar root every tool works in. */
  root: string;
  /** The server's environment: $CAESAR_DEPTH / $CAESAR_TASK_ID when a task's agent runs this server (recursion). */
  env: NodeJS.ProcessEnv;
}
