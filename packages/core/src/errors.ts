/**
 * The one error vocabulary of envgen. Every thrown error is an {@link EnvgenError} with a
 * stable `code`; its message says what to do next. Expected outcomes (a candidate that
 * breaks no test, a check that fails) are data, never errors.
 */
export const ERROR_CODES = {
  /** Bad flags, options or arguments: the CLI exits 2. */
  usage: 'usage',
  /** A config file or ENVGEN_* variable has a bad key or value. */
  configInvalid: 'config-invalid',
  /** The repo spec cannot be parsed. */
  repoSpecInvalid: 'repo-spec-invalid',
  /** The repo (or ref) cannot be fetched or found. */
  repoUnavailable: 'repo-unavailable',
  /** The repo has no Python tests envgen can run. */
  noPythonTests: 'no-python-tests',
  /** A path leaves the repo (absolute, `..`, symlink). */
  pathEscape: 'path-escape',
  /** The requested sandbox backend cannot run on this machine. */
  sandboxUnavailable: 'sandbox-unavailable',
  /** The sandbox itself failed (not the code inside it). */
  sandboxFailed: 'sandbox-failed',
  /** The test runner could not run or its output could not be read. */
  testRunFailed: 'test-run-failed',
  /** A Python file could not be parsed. */
  parseFailed: 'parse-failed',
  /** A stored artifact (cache entry, bundle, instance) is missing or corrupt. */
  storeCorrupt: 'store-corrupt',
  /** Something outside envgen (a program, a package) is missing. */
  dependencyMissing: 'dependency-missing',
  /** A bug in envgen itself. */
  internal: 'internal',
  /** A store (the pool) was written by a newer envgen than this one. */
  storeVersion: 'store-version',
  /** An LLM endpoint failed, or its answers stayed unusable after the allowed retries. */
  llmFailed: 'llm-failed',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** An error with a stable code and a message that says what to do next. */
export class EnvgenError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EnvgenError';
    this.code = code;
  }
}

/** True when `error` is an {@link EnvgenError}, optionally with the given code. */
export function isEnvgenError(error: unknown, code?: ErrorCode): error is EnvgenError {
  return error instanceof EnvgenError && (code === undefined || error.code === code);
}

/** The message of any thrown value, for wrapping causes into new messages. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
