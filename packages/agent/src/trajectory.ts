import type { TokenUsage } from '@envgen/core';
import type { LocalizationReward, Location } from '@envgen/rewards';
import type { ToolSchema } from './tools.js';

/** A tool call as the OpenAI chat format writes it (arguments are JSON text). */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One chat message of a trajectory, in the OpenAI chat format CodeScout's rollouts use. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; reasoning_content?: string }
  | { role: 'tool'; tool_call_id: string; name: string; content: string };

/** Which solver produced a trajectory. */
export type SolverKind = 'agent' | 'baseline';

/**
 * Why an episode ended: `localization_finish` (a valid answer), `max_turns` (the turns ran
 * out without one), `error` (the model endpoint failed; such rollouts are not the
 * policy's doing and are not recorded as attempts).
 */
export type FinishReason = 'localization_finish' | 'max_turns' | 'error';

/** One rollout: what was said and done, the answer, and how it scored. One JSONL line. */
export interface Trajectory {
  instance_id: string;
  run_id: string;
  solver: SolverKind;
  /** The model's name as sent to the endpoint; null for the baseline. */
  model: string | null;
  /** system, user, then assistant turns (with `tool_calls`) each followed by one `tool` message per call. */
  messages: ChatMessage[];
  /** The tool schemas offered. */
  tools: ToolSchema[];
  /** The accepted `localization_finish` locations (normalized); null without one. */
  locations: Location[] | null;
  finish: { reason: FinishReason; detail?: string };
  /** Localization reward against the task's gold (0 without a valid answer). */
  reward: LocalizationReward;
  /** Solved by the run's rule (default: entity F1 = 1). */
  solved: boolean;
  /** Summed over the episode's model calls (zeros for the baseline). */
  usage: TokenUsage;
  /** Model calls made (the baseline counts its one scripted turn per step). */
  turns: number;
  tool_calls: number;
  timing: {
    started_at: string;
    duration_ms: number;
    /** Time spent waiting for the model. */
    model_ms: number;
    /** Time spent running tools. */
    tool_ms: number;
  };
}
