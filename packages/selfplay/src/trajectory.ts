import type { ChatMessage, Episode, ToolSchema } from '@envgen/agent';
import type { CheckResult } from '@envgen/bundle';
import type { TokenUsage } from '@envgen/core';
import type { RepairEvaluation } from './repair-evaluation.js';

/** Which side of self-play an episode played. */
export type SelfPlayRole = 'injector' | 'solver';

/** Why a self-play episode ended: its submit call, a limit, or a failed model endpoint. */
export type SelfPlayFinish = { reason: 'submit' } | { reason: 'max_turns' | 'max_tokens' | 'wall_time' | 'error'; detail: string };

/** One self-play episode, scored: one JSONL line a trainer reads. */
export interface SelfPlayTrajectory {
  run_id: string;
  role: SelfPlayRole;
  /** solver: the instance repaired; injector: the instance its bundle became (null when rejected). */
  instance_id: string | null;
  repo: string;
  /** injector: `llm_removal`, `llm_history`, `llm_direct` (or the bundle's own for fed-in bundles); solver: the instance's strategy. */
  strategy: string;
  /** The bug's order: 1 for an injected bug, 2 for a failed repair on top of one. */
  order: number;
  /** For order 2: the instance whose failed repair made it. */
  parent: string | null;
  model: string | null;
  messages: ChatMessage[];
  tools: ToolSchema[];
  finish: SelfPlayFinish;
  /**
   * injector: −1 when a check failed, else from the group's solve rate; solver: the repair
   * reward ±1. Null when the model endpoint failed (not the policy's doing: not scored).
   */
  reward: number | null;
  /** injector: the seven checks with their evidence (empty when nothing was submitted). */
  checks?: CheckResult[];
  /** injector: the solver group's solve rate (null when the checks failed). */
  solve_rate?: number | null;
  /** solver: the checkout's diff, and how it was evaluated. */
  patch?: string;
  evaluation?: RepairEvaluation;
  usage: TokenUsage;
  turns: number;
  tool_calls: number;
  timing: { started_at: string; duration_ms: number; model_ms: number; tool_ms: number };
}

/** How an episode's end reads in a trajectory. */
export function selfPlayFinish(episode: Episode): SelfPlayFinish {
  return episode.end.reason === 'done' ? { reason: 'submit' } : { reason: episode.end.reason, detail: episode.end.detail };
}

/** The fields every self-play trajectory takes from its episode. */
export function episodeFields(episode: Episode, startedAt: Date, started: number): Pick<SelfPlayTrajectory, 'messages' | 'finish' | 'usage' | 'turns' | 'tool_calls' | 'timing'> {
  return {
    messages: episode.messages,
    finish: selfPlayFinish(episode),
    usage: episode.usage,
    turns: episode.turns,
    tool_calls: episode.toolCalls,
    timing: { started_at: startedAt.toISOString(), duration_ms: Math.round(performance.now() - started), model_ms: episode.modelMs, tool_ms: episode.toolMs },
  };
}
