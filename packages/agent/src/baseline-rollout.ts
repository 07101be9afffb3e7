import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TokenUsage } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import { detectProfile } from '@envgen/repo';
import { isSolved, localizationReward, normalizeLocations } from '@envgen/rewards';
import type { IsSolvedOptions, Location } from '@envgen/rewards';
import { SANDBOX_WORKDIR } from '@envgen/sandbox';
import type { RolloutTask } from './agent-rollout.js';
import { DEFAULT_MAX_TURNS } from './agent-rollout.js';
import { createBm25Index, tokenizeCode } from './bm25.js';
import { renderSystemPrompt, renderUserMessage } from './prompts.js';
import { AGENT_TOOLS, LOCALIZATION_FINISH_TOOL_NAME } from './tools.js';
import type { ChatMessage, Trajectory } from './trajectory.js';

/** A source file to rank, with its text. */
export interface SourceFile {
  /** Repo-relative path. */
  path: string;
  source: string;
}

/** A function or method ranked against a problem statement. */
export interface RankedEntity {
  file: string;
  /** `func` or `Class.method`. */
  qualifiedName: string;
  className: string | null;
  name: string;
  /** Its own BM25 score over function bodies. */
  entityScore: number;
  /** Its file's BM25 score over whole files. */
  fileScore: number;
  /** `entity / best entity + fileWeight · file / best file`. */
  score: number;
}

/** Options of {@link rankEntities}. */
export interface RankEntitiesOptions {
  /** Weight of the file's score against the entity's (default 0.5). */
  fileWeight?: number;
}

// A definition's name says more than any word of its body: its tokens count this often.
const NAME_WEIGHT = 3;

/**
 * Ranks the functions and methods of `files` against a problem statement with BM25 on two
 * levels: each function body (its name weighted up) and each whole file (its path
 * weighted up). Pure: text in, ranking out. Classes are not ranked on their own: their
 * methods are.
 */
export function rankEntities(files: readonly SourceFile[], statement: string, options: RankEntitiesOptions = {}): RankedEntity[] {
  const query = tokenizeCode(statement);
  const fileIndex = createBm25Index(
    files.map((file) => {
      // The path's words count twice: `itertoolz.py` says as much as its contents.
      const pathTokens = tokenizeCode(file.path.replaceAll('/', ' '));
      return { id: file.path, tokens: [...pathTokens, ...pathTokens, ...tokenizeCode(file.source)] };
    }),
  );
  const entities = new Map<string, Omit<RankedEntity, 'entityScore' | 'fileScore' | 'score'>>();
  const documents = files.flatMap((file) => {
    const bytes = Buffer.from(file.source, 'utf8');
    return extractEntities(file.source, file.path).entities.flatMap((entity) => {
      if (entity.kind === 'class') return [];
      const id = `${file.path}:${entity.qualifiedName}`;
      entities.set(id, { file: file.path, qualifiedName: entity.qualifiedName, className: entity.className, name: entity.name });
      const nameTokens = tokenizeCode(`${entity.name} ${entity.className ?? ''}`);
      const body = bytes.subarray(entity.startByte, entity.endByte).toString('utf8');
      return [{ id, tokens: [...Array.from({ length: NAME_WEIGHT }, () => nameTokens).flat(), ...tokenizeCode(body)] }];
    });
  });
  const fileScores = new Map(fileIndex.search(query).map((hit) => [hit.id, hit.score]));
  const bestFile = Math.max(0, ...fileScores.values());
  const entityHits = createBm25Index(documents).search(query);
  const bestEntity = entityHits[0]?.score ?? 0;
  const fileWeight = options.fileWeight ?? 0.5;
  return entityHits
    .map((hit) => {
      const entity = entities.get(hit.id) as Omit<RankedEntity, 'entityScore' | 'fileScore' | 'score'>;
      const fileScore = fileScores.get(entity.file) ?? 0;
      const score = hit.score / bestEntity + (bestFile > 0 ? (fileWeight * fileScore) / bestFile : 0);
      return { ...entity, entityScore: hit.score, fileScore, score };
    })
    .sort((x, y) => y.score - x.score || (x.file + x.qualifiedName < y.file + y.qualifiedName ? -1 : 1));
}

/** Options of {@link runBaselineRollout}. */
export interface BaselineRolloutOptions {
  task: RolloutTask;
  /** Host directory of the instance's checkout. */
  checkout: string;
  runId: string;
  /** Repo-relative source files to search (default: the detected profile's source files). */
  sourceFiles?: string[];
  /** The repo path the user message names (default the sandbox's `/tmp/repo`, as the agent sees it). */
  repoPath?: string;
  /** Locations to submit, best first (default 1: most bugs sit in one function). */
  maxLocations?: number;
  solvedBy?: IsSolvedOptions;
}

/**
 * The no-LLM baseline: reads the checkout's source files (as text, never running them),
 * ranks functions and methods with {@link rankEntities} against the problem statement,
 * and submits the best `maxLocations` through `localization_finish`. The trajectory has
 * the agent's shape — the same system and user messages, one assistant turn whose text
 * lists the ranking and whose tool call is the answer, and the tool's reply — so it trains
 * and scores like any other.
 */
export async function runBaselineRollout(options: BaselineRolloutOptions): Promise<Trajectory> {
  const startedAt = new Date();
  const started = performance.now();
  const paths = options.sourceFiles ?? (await detectProfile(options.checkout)).sourceFiles;
  const files: SourceFile[] = await Promise.all(paths.map(async (path) => ({ path, source: await readFile(join(options.checkout, path), 'utf8') })));
  const ranked = rankEntities(files, options.task.problem_statement.text);
  const chosen = ranked.slice(0, Math.max(1, options.maxLocations ?? 1));
  const repoPath = options.repoPath ?? SANDBOX_WORKDIR;
  const messages: ChatMessage[] = [
    { role: 'system', content: renderSystemPrompt({ maxTurns: DEFAULT_MAX_TURNS }) },
    { role: 'user', content: renderUserMessage({ repoPath, issue: options.task.problem_statement.text }) },
  ];
  const summary = [
    `BM25 over ${files.length} source files and their functions against the issue; best matches:`,
    ...ranked.slice(0, 5).map((entity, i) => `${i + 1}. ${entity.file}:${entity.qualifiedName} (score ${entity.score.toFixed(3)})`),
  ];
  let locations: Location[] | null = null;
  let args: unknown = null;
  if (chosen.length === 0) {
    messages.push({ role: 'assistant', content: `${summary[0] ?? ''}\nNo function shares a word with the issue; no answer.` });
  } else {
    args = {
      locations: chosen.map((entity) => ({
        file: entity.file,
        ...(entity.className === null ? {} : { class_name: entity.className }),
        function_name: entity.name,
      })),
    };
    const normalized = normalizeLocations(args);
    locations = normalized.ok ? normalized.locations : null;
    messages.push({
      role: 'assistant',
      content: summary.join('\n'),
      tool_calls: [{ id: 'call_0001', type: 'function', function: { name: LOCALIZATION_FINISH_TOOL_NAME, arguments: JSON.stringify(args) } }],
    });
    messages.push({
      role: 'tool',
      tool_call_id: 'call_0001',
      name: LOCALIZATION_FINISH_TOOL_NAME,
      content: `Submitted ${locations?.length ?? 0} location(s):\n${JSON.stringify(locations, null, 2)}`,
    });
  }
  const reward = locations === null
    ? { ...localizationReward(options.task.file_changes, null), reason: 'the baseline found no function sharing a word with the issue' }
    : localizationReward(options.task.file_changes, args);
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const durationMs = Math.round(performance.now() - started);
  return {
    instance_id: options.task.instance_id,
    run_id: options.runId,
    solver: 'baseline',
    model: null,
    messages,
    tools: [...AGENT_TOOLS],
    locations,
    finish: locations === null ? { reason: 'max_turns', detail: 'no function shares a word with the issue' } : { reason: 'localization_finish' },
    reward,
    solved: isSolved(reward, options.solvedBy),
    usage,
    turns: 1,
    tool_calls: locations === null ? 0 : 1,
    timing: { started_at: startedAt.toISOString(), duration_ms: durationMs, model_ms: 0, tool_ms: durationMs },
  };
}
