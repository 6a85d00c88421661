export { ChangedFileNode, type ChangedFile } from './changedFileNode';
export { DetailNode } from './detailNode';
export { ErrorNode } from './errorNode';
export { FolderNode } from './folderNode';
export { MoreNode } from './moreNode';
export { QuestionNode } from './questionNode';
export { TaskNode, silenceThresholdMs } from './taskNode';
export { ToolCallNode } from './toolCallNode';
export { UsageNode } from './usageNode';
