export * from './core';
export { anthropicDialect, startAnthropicServer } from './anthropic';
export { responsesDialect, startResponsesServer } from './responses';
export { chatDialect, startChatServer } from './chat';
export { geminiDialect, startGeminiServer } from './gemini';
