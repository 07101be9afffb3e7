/** Options of {@link renderSystemPrompt}. */
export interface SystemPromptOptions {
  /** Model calls the episode may take. */
  maxTurns: number;
}

/**
 * Our system prompt for code localization: what the task is, how to work with the two
 * tools, and which fields of `localization_finish` to fill.
 */
export function renderSystemPrompt(options: SystemPromptOptions): string {
  return `You are a code search agent. You are given a Python repository and an issue report. Your job is to find the code that must be changed to resolve the issue: the files, classes and functions a fix would edit. You do not fix anything.

You have two tools:
- terminal: runs a bash command in a persistent shell on the repository. Use rg, grep, find, ls, sed -n and cat to search and read code. You may call it several times in one turn; the calls run in order.
- localization_finish: submits your answer and ends the episode.

You have at most ${options.maxTurns} turns (model responses). Search broadly first (several commands per turn), read the relevant definitions, and call localization_finish before you run out of turns: an episode without it scores nothing.

Rules for localization_finish:
- Every entry has "file": the path relative to the repository root, without "./" or a leading "/".
- For a method: also "class_name" (the class) and "function_name" (the method name alone).
- For a function outside any class: also "function_name".
- For class-level code outside any method: "file" and "class_name".
- For module-level code (imports, constants, globals): "file" alone.
- List each place to edit once; only code that must change, not tests that exercise it.`;
}

/** Options of {@link renderUserMessage}. */
export interface UserMessageOptions {
  /** The repository's path as the terminal sees it. */
  repoPath: string;
  /** The problem statement. */
  issue: string;
}

/** The task message: the repository path and the issue inside `<issue_description>`. */
export function renderUserMessage(options: UserMessageOptions): string {
  return `The repository is checked out at ${options.repoPath} (the terminal starts there).

<issue_description>
${options.issue.trim()}
</issue_description>

Find the code that must change to resolve the issue above, then call localization_finish with those locations.`;
}
