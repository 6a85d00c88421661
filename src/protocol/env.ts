/** The eight environment variables every agent receives (OACP v1 "Environment variables"). All values are strings. */
export const ENV = {
  taskDir: 'CAESAR_TASK_DIR',
  taskFile: 'CAESAR_TASK_FILE',
  reportPath: 'CAESAR_REPORT_PATH',
  eventsPath: 'CAESAR_EVENTS_PATH',
  taskId: 'CAESAR_TASK_ID',
  agent: 'CAESAR_AGENT',
  depth: 'CAESAR_DEPTH',
  protocolVersion: 'CAESAR_PROTOCOL_VERSION',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV];
