/**
 * Data contracts shared across packages (DESIGN.md "Contracts"). They are serialized into
 * bundles, the pool and exports, so fields change only on purpose.
 */

/** Which family of strategy made a candidate. */
export type StrategyFamily = 'procedural' | 'removal' | 'history' | 'combine' | 'llm';

/** One proposed bug: a diff over source files and where it came from. */
export interface Candidate {
  /** Strategy name, e.g. `change_operator`, `remove_function_body`, `history_revert`, `combine`. */
  strategy: string;
  family: StrategyFamily;
  /** Seed the strategy's random choices were drawn from. */
  seed: number;
  /** Unified diff, git style (`a/` `b/` prefixes), over source files only: clean → buggy. */
  patch: string;
  /** Entities the bug touches, as `path:qualifiedName`. */
  entities: string[];
  /** What was changed, in words ("inverted if/else in toolz/itertoolz.py:groupby"). */
  description: string;
  /** For `combine`: the instance ids merged into this one. */
  parents?: string[];
  /** 2 for a higher-order bug (a failed repair's patch on top of its bug); absent means 1. */
  order?: number;
  /** For a higher-order bug: the instance whose failed repair made it. */
  parent?: string;
}

/** Why a candidate is not an instance. Expected outcomes, so data, not errors. */
export type RejectionReason =
  | 'apply-failed'
  | 'no-failing-test'
  | 'no-passing-test'
  | 'timeout'
  /** The run hit the sandbox's memory or process limit: a bug that allocates or forks without end, as a hang runs. */
  | 'resource-limit'
  | 'crashed'
  /**
   * pytest stopped with an internal error raised through a file the bug changes (a plugin the
   * project is, a hook it implements): plain pytest with the bug stops the same, so no test can prove it.
   */
  | 'internal-error'
  | 'check-failed'
  /** The failing tests cannot be deleted from test files (doctests in source files, generated tests). */
  | 'unweakenable'
  /** Another bug of the same repo, commit and strategy has the same instance id (hash8 is 32 bits). */
  | 'id-collision';

/** The validation verdict of one candidate. */
export type Verdict =
  | {
      kind: 'instance';
      failToPass: string[];
      passToPass: string[];
      /**
       * Tests counted flaky (in neither set) that failed in this verdict's run, absent when
       * none: no part of the instance, but the weakening deletes them too, so that the bug is
       * hidden from the weakened suite also in the runs where they do not flake.
       */
      flakyFailing?: string[];
    }
  | { kind: 'rejected'; reason: RejectionReason; detail: string };

/** Per-file gold localization of a fix (DESIGN.md "Gold localization"). */
export interface LocalizationChanges {
  edited_entities: string[];
  edited_modules: string[];
  added_entities: string[];
  added_modules: string[];
}

export interface FileChanges {
  file: string;
  changes: LocalizationChanges;
}

/** The self-play artifact set of one bug (DESIGN.md "Bundle"), as file contents. */
export interface BundleFiles {
  'bug_inject.diff': string;
  'test_weaken.diff': string;
  'test_files.txt': string;
  'test_script.sh': string;
  'test_parser.py': string;
}

/** The bundle's file names, in the order DESIGN.md lists them. */
export const BUNDLE_FILE_NAMES = ['bug_inject.diff', 'test_weaken.diff', 'test_files.txt', 'test_script.sh', 'test_parser.py'] as const;

/** A validated bug, as stored in the pool. */
export interface Instance {
  /** `<owner>__<name>.<sha8>.<strategy>__<hash8>`; hash8 derives from the patch. */
  instance_id: string;
  /** `owner/name`. */
  repo: string;
  base_commit: string;
  /** The bug diff (clean → buggy); the fix is its reverse. */
  patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  strategy: string;
  family: StrategyFamily;
  seed: number;
  entities: string[];
  description: string;
  parents?: string[];
  /** 2 for a higher-order bug (a failed repair's patch on top of its bug); absent means 1. */
  order?: number;
  /** For a higher-order bug: the instance whose failed repair made it. */
  parent?: string;
  created_at: string;
}

/** How a problem statement was made (issue 4): chosen per instance and recorded with it. */
export type ProblemStatementKind = 'tests' | 'self-play' | 'issue';

/** Tokens an LLM call used, as the OpenAI API reports them. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The text an agent is given for an instance, with how it was made. */
export interface ProblemStatement {
  kind: ProblemStatementKind;
  /** Never empty. */
  text: string;
  /** For `issue`: the model that wrote it and what it cost. */
  model?: string;
  usage?: TokenUsage;
  created_at: string;
}

/**
 * Where an instance's leak-free checkout comes from: a ref in a local bare mirror whose
 * only commit holds the buggy tree (no parent, no reflog, no object of the fix).
 */
export interface InstanceEnvironment {
  /** Absolute path of the bare mirror. */
  mirror: string;
  /** The ref naming the buggy commit, e.g. `refs/envgen/<instance_id>`. */
  ref: string;
  /** The buggy commit's sha. */
  commit: string;
}

/** What the task builder adds to an instance: gold labels, problem statement, environment. */
export interface Task {
  instance_id: string;
  /** Gold localization of the fix, per file (DESIGN.md "Gold localization"). */
  file_changes: FileChanges[];
  problem_statement: ProblemStatement;
  environment: InstanceEnvironment;
  /** The image the instance's tests run in (the Docker image name of its profile). */
  image_name: string;
}
