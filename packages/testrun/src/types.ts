/** Outcome of one test, keyed by pytest node id (`tests/test_x.py::TestC::test_m[p]`). */
export type TestOutcome = 'passed' | 'failed' | 'error' | 'skipped';

export interface TestResult {
  outcome: TestOutcome;
  /** Seconds spent in setup + call + teardown. */
  duration: number;
  /**
   * Wall seconds of the test's whole run protocol: its duration plus pytest's own work for
   * it (hooks, reports, the terminal's output), which every run of it pays.
   */
  wall?: number;
  /** Set when the test was stopped at the profile's per-test limit (its outcome is then `failed` or `error`). */
  timedOut?: true;
  /** A failed or erroring test's exception, on one line (`locale.Error: unsupported locale setting`). */
  reason?: string;
}

/** A file pytest could not collect (import error, syntax error...). */
export interface CollectionError {
  nodeid: string;
  message: string;
}

/** One pytest run in a sandbox. */
export interface TestRun {
  results: Record<string, TestResult>;
  collectionErrors: CollectionError[];
  /**
   * How the run ended: `completed` (pytest finished, whatever the test outcomes), `timeout`,
   * `crashed` (pytest died or printed no results; see `output`), `interrupted` (memory or
   * process limit), `stopped` (pytest refused to start the session over the project's own
   * code, exit 4: a conftest that fails to import; with the options a clean run completed
   * with, that is the code under test's doing, never the command line's).
   */
  status: 'completed' | 'timeout' | 'crashed' | 'interrupted' | 'stopped';
  /** The sandbox limit that stopped an `interrupted` run, when one did. */
  limitHit?: 'memory' | 'processes';
  /**
   * A `timeout` the plugin's watchdog ended: a test with a limit of its own ran past it in code
   * that never returned to the interpreter (a built-in looping in C), so the run has no
   * results; the kernel ended it at the limit and a grace in processor time.
   */
  watchdog?: true;
  exitCode: number | null;
  seconds: number;
  /** Tail of pytest's own output, for error messages. */
  output: string;
}

/** A covered function: repo-relative file and the entity's qualified name. */
export interface CoveredEntity {
  file: string;
  qualifiedName: string;
}

/**
 * The clean repo's behaviour: per-test results of two runs, flaky tests (outcome differed),
 * and which tests executed which entities.
 */
/** A module of the tree that the tests imported from somewhere else. */
export interface ImportedElsewhere {
  /** Its import name (`yaml`). */
  module: string;
  /** Where it is in the tree, repo-relative (`lib/yaml`, `lib/util.py`). */
  tree: string;
  /** The file the tests imported instead (`/usr/lib/python3/dist-packages/yaml/__init__.py`). */
  imported: string;
}

export interface Baseline {
  commit: string;
  profileHash: string;
  /** Results of the first run, flaky tests included. */
  results: Record<string, TestResult>;
  /** Node ids whose outcome differed between the two runs; used nowhere after. */
  flaky: string[];
  collectionErrors: CollectionError[];
  /** Entity key (`file:qualifiedName`) → node ids of tests that executed it. */
  coverage: Record<string, string[]>;
  /**
   * Tests that took the coverage tracer's profile hook (a profiler of their own): their
   * coverage holds only what ran before, so they may run any function; absent in baselines
   * made before envgen recorded it.
   */
  untraced?: string[];
  /**
   * The tree's top-level packages and modules the coverage run imported from another copy
   * outside the tree (Debian's, an installed build): its tests ran that copy, not the tree's
   * code. Absent when there is none, and in baselines made before envgen recorded it.
   */
  importedElsewhere?: ImportedElsewhere[];
  /**
   * Entity keys of the functions that ran while pytest collected the suite, before any test
   * (the package's own code its import runs, as six's module tables or a grammar built at
   * import): a bug there breaks the import and with it every test. Absent in baselines made
   * before envgen recorded it.
   */
  ranAtCollection?: string[];
  /** Entity keys of every function and method in the profile's source files, sorted. */
  functions: string[];
  /**
   * Source file → the lines that ran in the coverage run (any test, imports included),
   * sorted; a file none of whose lines ran is left out. Null when the suite displaced the
   * line tracer: which lines ran is then unknown.
   */
  executedLines: Record<string, number[]> | null;
  /**
   * Source file → those of {@link executedLines} that had run when the first test began
   * (collection: the test modules' imports and what they called), whether or not a test ran
   * them again: a bug on such a line most often breaks the import. Absent where the lines
   * are unknown, no test began, and in baselines made before envgen recorded it.
   */
  collectionLines?: Record<string, number[]>;
  /** Wall seconds of each suite run. */
  suiteSeconds: number[];
  /**
   * The fingerprint of the packages the profile's python saw where the tests ran (see
   * `environmentFingerprint`); absent in baselines made before envgen recorded it.
   */
  environment?: string;
  /**
   * The hash of the profile's source files, whose lines and functions it recorded: a profile
   * that takes other files for source (an envgen that tells them apart otherwise) needs a
   * baseline of its own. Absent in baselines made before envgen recorded it.
   */
  sources?: string;
  createdAt: string;
}
