import { STR_REPLACE_EDITOR_TOOL_NAME, TERMINAL_TOOL_NAME, argumentsRecord, openFileEditor, openPersistentShell, runTerminalCall } from '@envgen/agent';
import type { EpisodeLimits, FileEditor, ModelClient, PersistentShell, ToolCall, ToolOutcome } from '@envgen/agent';
import type { Logger } from '@envgen/core';
import type { SandboxLimits, SandboxProvider } from '@envgen/sandbox';

/** Limits of one episode. */
export interface EpisodeBudget {
  maxTurns?: number;
  maxTokens?: number;
  wallTimeMs?: number;
}

/** What every self-play agent runs with: the model, the sandbox, its limits. */
export interface SelfPlayAgentOptions extends EpisodeBudget {
  sandboxProvider: SandboxProvider;
  client: ModelClient;
  /** Limits of the shell's sandbox (memory, processes). */
  sandboxLimits?: Partial<SandboxLimits>;
  /** docker: the image. */
  image?: string;
  signal?: AbortSignal;
  logger?: Logger;
}

/** The episode limits of an agent's options, with its role's default turns. */
export function episodeLimits(options: EpisodeBudget, defaultMaxTurns: number): EpisodeLimits {
  return {
    maxTurns: options.maxTurns ?? defaultMaxTurns,
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    ...(options.wallTimeMs === undefined ? {} : { wallTimeMs: options.wallTimeMs }),
  };
}

/** Opens the workbench of an agent's options on a checkout. */
export function openAgentWorkbench(options: SelfPlayAgentOptions, checkout: string): Promise<Workbench> {
  return openWorkbench({
    provider: options.sandboxProvider,
    checkout,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.sandboxLimits === undefined ? {} : { limits: options.sandboxLimits }),
    ...(options.image === undefined ? {} : { image: options.image }),
  });
}

/** Options of {@link openWorkbench}. */
export interface OpenWorkbenchOptions {
  provider: SandboxProvider;
  /** Host directory of the agent's checkout. */
  checkout: string;
  /** Limits of the shell's sandbox (memory, processes). */
  limits?: Partial<SandboxLimits>;
  image?: string;
  logger?: Logger;
}

/** The terminal and the editor of one self-play episode, on one checkout. */
export interface Workbench {
  /** The checkout as the sandbox shows it. */
  readonly workdir: string;
  readonly editor: FileEditor;
  /** Runs a terminal or editor call; any other tool goes to `other`. */
  runTool(call: ToolCall, args: unknown, other: (args: unknown) => Promise<ToolOutcome>): Promise<ToolOutcome>;
  close(): Promise<void>;
}

/** Opens the persistent shell and the file editor on a checkout, both sandboxed. */
export async function openWorkbench(options: OpenWorkbenchOptions): Promise<Workbench> {
  const shell: PersistentShell = await openPersistentShell({
    provider: options.provider,
    worktree: options.checkout,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.image === undefined ? {} : { image: options.image }),
  });
  let editor: FileEditor;
  try {
    editor = await openFileEditor({ provider: options.provider, worktree: options.checkout, ...(options.image === undefined ? {} : { image: options.image }) });
  } catch (error) {
    await shell.close();
    throw error;
  }
  return {
    workdir: shell.workdir,
    editor,
    async runTool(call, args, other) {
      if (call.function.name === TERMINAL_TOOL_NAME) return { content: await runTerminalCall(shell, args) };
      if (call.function.name === STR_REPLACE_EDITOR_TOOL_NAME) {
        const record = argumentsRecord(args);
        return { content: record === undefined ? 'Error: str_replace_editor needs a JSON object of arguments.' : await editor.run(record) };
      }
      return other(args);
    },
    async close() {
      await Promise.allSettled([shell.close(), editor.close()]);
    },
  };
}
