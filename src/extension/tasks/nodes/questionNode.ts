import * as vscode from 'vscode';
import { optionButtonLabels } from '../../../common/option-labels';
import type { QuestionFile } from '../../../protocol';
import { oneLine } from '../format';
import { DetailNode } from './detailNode';

/** A question of the agent waiting for an answer; a click answers it. */
export class QuestionNode extends DetailNode {
  readonly kind = 'question';

  constructor(taskId: string, q: QuestionFile) {
    const item = new vscode.TreeItem(oneLine(q.question));
    item.id = `${taskId}/q/${q.id}`;
    item.iconPath = new vscode.ThemeIcon('question', new vscode.ThemeColor('charts.yellow'));
    item.description = q.options.length ? optionButtonLabels(q.options).join(' / ') : 'waiting for an answer';
    item.tooltip = q.question;
    item.contextValue = 'question';
    item.command = { command: 'caesar.answerQuestion', title: 'Answer…', arguments: [taskId, q.id] };
    super(taskId, q.id, item);
  }

  get questionId(): string {
    return this.key;
  }
}
