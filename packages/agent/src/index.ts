export { DEFAULT_COMMAND_TIMEOUT_S, DEFAULT_MAX_TURNS, MAX_COMMAND_TIMEOUT_S, formatTerminalObservation, runAgentRollout, runTerminalCall } from './agent-rollout.js';
export type { AgentRolloutOptions, RolloutTask, TerminalCallOptions } from './agent-rollout.js';
export { argumentsRecord, runEpisode } from './episode.js';
export type { Episode, EpisodeEnd, EpisodeLimits, RunEpisodeOptions, ToolOutcome } from './episode.js';
export { EDITOR_COMMANDS, STR_REPLACE_EDITOR_TOOL, STR_REPLACE_EDITOR_TOOL_NAME, openFileEditor } from './file-editor.js';
export type { EditorCommand, EditorRead, FileEditor, OpenFileEditorOptions } from './file-editor.js';
export { parseHermesToolCalls, renderHermesToolsSection } from './hermes.js';
export type { ParsedText, TextToolCall } from './hermes.js';
export { createModelClient } from './model-client.js';
export type { ModelClient, ModelClientOptions, ModelReply, ToolFormat } from './model-client.js';
export { DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_CHARS, openPersistentShell } from './persistent-shell.js';
export type {
  OpenPersistentShellOptions,
  PersistentShell,
  ShellCommandResult,
  ShellCommandStatus,
  ShellRunOptions,
} from './persistent-shell.js';
export { renderSystemPrompt, renderUserMessage } from './prompts.js';
export type { SystemPromptOptions, UserMessageOptions } from './prompts.js';
export { AGENT_TOOLS, LOCALIZATION_FINISH_TOOL, LOCALIZATION_FINISH_TOOL_NAME, TERMINAL_TOOL, TERMINAL_TOOL_NAME } from './tools.js';
export type { ToolSchema } from './tools.js';
export type { ChatMessage, FinishReason, SolverKind, ToolCall, Trajectory } from './trajectory.js';
export { rankEntities, runBaselineRollout } from './baseline-rollout.js';
export type { BaselineRolloutOptions, RankEntitiesOptions, RankedEntity, SourceFile } from './baseline-rollout.js';
export { createBm25Index, tokenizeCode } from './bm25.js';
export type { Bm25Document, Bm25Hit, Bm25Index, Bm25Options } from './bm25.js';
