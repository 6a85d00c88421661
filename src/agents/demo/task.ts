/** The fields of task.json (caesar.task/v1) the demo agent reads, in either mode (stream or ACP). */
export interface Task {
  id: string;
  objective: string;
  mode: 'read-only' | 'write';
  workspace: string;
  report_path: string;
  deadline_ms: number;
  created_at: string;
}
