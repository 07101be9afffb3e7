import { RESULT_MARKER } from '@envgen/bundle';

/** The injector's strategies (SSR's): delete code, revert history, or write a bug directly. */
export const INJECTOR_STRATEGIES = ['removal', 'history', 'direct'] as const;
export type InjectorStrategy = (typeof INJECTOR_STRATEGIES)[number];

/** The strategy name an injector's instances are stored under (`llm_removal`, ...). */
export function injectorStrategyName(strategy: InjectorStrategy): string {
  return `llm_${strategy}`;
}

/** Options of {@link renderRepairSystemPrompt}. */
export interface RepairPromptOptions {
  maxTurns: number;
}

/** Our system prompt for the repair solver. */
export function renderRepairSystemPrompt(options: RepairPromptOptions): string {
  return `You are a software engineer. You are given a Python repository with a bug and a problem statement. Fix the bug by editing the source code.

You have three tools:
- terminal: runs a bash command in a persistent shell on the repository (rg, grep, sed -n, cat, python3, pytest; no network).
- str_replace_editor: views, creates and edits files (view, create, str_replace, insert, undo_edit).
- submit: ends the episode. Your patch is the repository's diff against its initial commit.

Work like this: read the problem statement, find the code involved, reproduce the failure if you can (the statement's tests can be run with python3 -m pytest after restoring them in a scratch copy, or reproduced with python3 -c), fix the source, check the fix, then call submit.

Rules:
- Change source files only. Test files are restored before your patch is evaluated; revert any change you made to them (git checkout -- <file>) before submitting.
- Keep the rest of the behaviour intact: the repository's whole test suite must pass with your patch.
- You have at most ${options.maxTurns} turns (model responses). Call submit before they run out; without it your changes are still evaluated as they stand.`;
}

/** The solver's task message: the repository path and the statement. */
export function renderRepairUserMessage(repoPath: string, statement: string): string {
  return `The repository is checked out at ${repoPath} (the terminal starts there).

<problem_statement>
${statement.trim()}
</problem_statement>

Fix the source code so that the tests described above pass, then call submit.`;
}

const STRATEGY_GUIDES: Record<InjectorStrategy, string> = {
  removal: `Strategy: removal. Delete code rather than rewrite it: remove the body of a function (keep its signature and docstring, return a plain default), drop a branch, a loop, a validation or a few hunks of a larger function, so that the package still imports and most of its tests still pass, but the behaviour some tests check is gone.`,
  history: `Strategy: history. Read the repository's history (git log --oneline, git log -p -- <file>, git show <commit>) and pick an earlier commit that fixed a bug or added a feature in the source code. Revert its source changes onto today's code (git show <commit> -- <source files> | git apply -R, or by hand), then make the smallest compatibility edits so the package imports and runs again. The bug is the old behaviour coming back.`,
  direct: `Strategy: direct. Change the logic of one or two functions so they give wrong results in some cases: a wrong condition, an off-by-one, a swapped argument, a missing case. Make it plausible, as a real mistake would be.`,
};

/** Options of {@link renderInjectorSystemPrompt}. */
export interface InjectorPromptOptions {
  strategy: InjectorStrategy;
  maxTurns: number;
  /** Where the repository appears in the sandbox. */
  repoPath: string;
  /** The interpreter the repository's tests run with. */
  python: string;
  /** The test command that runs the suite from the repository root (as envgen runs it). */
  testCommand: string;
}

/** Our system prompt for the bug injector, with its strategy's guide. */
export function renderInjectorSystemPrompt(options: InjectorPromptOptions): string {
  return `You are a bug injector in a self-play loop that trains code agents. You work on a Python repository and make a bug bundle: a bug that the repository's tests detect, and a weakening of those tests that hides it. Another agent will get the buggy code with the weakened tests and must find and fix the bug; your bundle is rewarded when it is solvable but not trivial.

You have three tools:
- terminal: runs a bash command in a persistent shell on the repository (git, rg, grep, sed, python3, ${options.python} -m pytest; no network).
- str_replace_editor: views, creates and edits files (view, create, str_replace, insert, undo_edit).
- submit: ends the episode with the paths of your five bundle files.

${STRATEGY_GUIDES[options.strategy]}

The bundle is five files. Write them under ${options.repoPath}/_bundle/ (that directory is not part of any diff):
1. bug_inject.diff: a git-style unified diff (a/ and b/ prefixes, paths relative to the repository root) over source files only, e.g. git diff -- <source files> > _bundle/bug_inject.diff.
2. test_weaken.diff: a git-style diff over test files only that deletes the tests your bug breaks (or the assertions that expose it). Deleting is required: commenting tests out does not count.
3. test_files.txt: the repository-relative paths of the test files, one per line; every file test_weaken.diff touches must be listed. These files are restored before each evaluation.
4. test_script.sh: a bash script that runs the tests from the repository root and prints per-test results. It runs with no network in a fresh copy of the repository. The suite runs with: ${options.testCommand}
5. test_parser.py: reads test_script.sh's output on stdin and prints one JSON object {"<test id>": "passed" | "failed" | "skipped", ...} on stdout. Standard library only. Test ids must be the same on every run.
A simple pair: test_script.sh runs ${options.python} -m pytest -rA -p no:cacheprovider --tb=no -q; test_parser.py reads the "PASSED <id>", "FAILED <id>", "ERROR <id>" and "SKIPPED" lines of the -rA summary. (envgen's own scripts print lines starting with "${RESULT_MARKER.trim()}" followed by JSON: you may use any format your parser reads.)

The bundle is checked against a clean copy of the repository, and it fails if any of these fails:
1. every listed test file exists; test_weaken.diff touches only listed files; bug_inject.diff touches no test file; no path leaves the repository.
2. the parser prints valid JSON of that shape on every run.
3. on the clean repository at least one test passes.
4. bug_inject.diff changes at least one source file.
5. with the bug, at least one test that passed on the clean repository fails.
6. with the bug and the weakening, every test the bug broke passes or is gone.
7. reverting any single changed file of the bug makes at least one failing test pass again (no file of the bug is dead weight).

Before submitting, check your own bundle: apply the diffs to a scratch copy (cp -r . /tmp/scratch, git apply) and run your script and parser on it, with and without the bug. You have at most ${options.maxTurns} turns (model responses): call submit before they run out.`;
}

/** The injector's task message. */
export function renderInjectorUserMessage(repoPath: string): string {
  return `The repository is checked out at ${repoPath} with its git history (the terminal starts there). Make a bug bundle with your strategy, write the five files under ${repoPath}/_bundle/, and call submit with their paths.`;
}
