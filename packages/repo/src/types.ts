/**
 * A parsed `--repo` value.
 * - `github`: `owner/name[@ref]`, cloned from the configured base URL (default https://github.com).
 * - `git`: any git URL (https, ssh, file://, or a path ending in .git), optional `@ref` suffix for URLs.
 * - `local`: a local directory; a plain tree (no .git) is snapshotted into a commit.
 * - `debian`: `debian:SOURCE[=VERSION]`, the upstream tree of a Debian source package.
 */
export type RepoSpec =
  | { kind: 'github'; owner: string; name: string; ref: string | null; raw: string }
  | { kind: 'git'; url: string; ref: string | null; raw: string }
  | { kind: 'local'; path: string; raw: string }
  | { kind: 'debian'; source: string; version: string | null; raw: string };

/** A repo resolved to a pinned commit in the mirror cache. */
export interface ResolvedRepo {
  spec: RepoSpec;
  /** `owner/name` used in ids and output (`debian/toolz` for `debian:toolz`). */
  owner: string;
  name: string;
  /** Full 40-hex commit sha every later step uses as its base. */
  commit: string;
  /** Bare mirror in the cache (or the user's own repo for local git dirs); never modified by jobs. */
  mirror: string;
  /** Debian packages the repo's tests need (from Build-Depends), empty for other kinds. */
  aptPackages: string[];
  /** The commit's git submodules envgen fetched; every checkout has their files (see {@link Submodule}). */
  submodules: Submodule[];
  /** Human notes gathered while acquiring (e.g. "uncommitted changes ignored"). */
  notes: string[];
}

/**
 * A git submodule of a repo's commit (a gitlink `.gitmodules` declares), fetched into a git
 * directory of its own. Its files are written into every checkout of the repo, where the
 * repo's own git sees the gitlink and nothing else: they are in no diff, and envgen injects no
 * bug into them (they are another project's).
 */
export interface Submodule {
  /** Repo-relative directory. */
  path: string;
  /** The commit the repo's gitlink pins. */
  commit: string;
  /** A git directory holding that commit (a mirror under `<home>/mirrors`, or a local repo's `.git/modules/<name>`); never modified. */
  mirror: string;
}

/** A job's own checkout of a resolved repo at its commit. */
export interface Worktree {
  path: string;
  commit: string;
  /** Removes the checkout. Idempotent. */
  remove(): Promise<void>;
}

/** A lower bound the project declares on a dependency, on the Debian package it maps to. */
export interface RequiredVersion {
  package: string;
  /** The upstream version, as Debian orders versions (`2.0~rc1`). */
  version: string;
  /** The requirement, as the project declares it (`parso>=0.8.6`). */
  requirement: string;
}

/**
 * How to run a repo's tests. Detected from the tree, then overridden by a profile file
 * (configs/profiles/<owner>__<name>.json or the user's config).
 */
export interface Profile {
  /** Interpreter inside the sandbox (default `/usr/bin/python3`). */
  python: string;
  /** Extra environment, e.g. PYTHONPATH=src for src layouts. */
  env: Record<string, string>;
  /** Debian packages the tests need (installed on the host for `local`, baked into the image for `docker`). */
  aptPackages: string[];
  /** Shell commands run once in the worktree before tests (e.g. building extensions); usually empty. */
  install: string[];
  /** Arguments to pytest after `python -m pytest` (paths or options), e.g. ["tests"]. */
  testArgs: string[];
  /** Globs of test files, repo-relative (test_*.py, *_test.py, tests/**, conftest.py). */
  testGlobs: string[];
  /** Repo-relative source files (Python files that are not tests), sorted. */
  sourceFiles: string[];
  /** Repo-relative test files, sorted. */
  testFiles: string[];
  /** Node ids passed to pytest as --deselect. */
  deselect: string[];
  /** Per-run wall-clock limit of the whole suite, ms. */
  timeoutMs: number;
  /** Per-test wall-clock limit, ms: a test running longer fails as timed out and the run goes on. */
  testTimeoutMs: number;
  /** Where each setting came from, e.g. {"env.PYTHONPATH": "src layout"}, for `envgen env` output. */
  provenance: Record<string, string>;
  /**
   * The git submodules checked out in the tree (absent: none). Part of {@link profileHash}: a
   * baseline made while a submodule could not be fetched is not the baseline of the tree that has it.
   */
  submodules?: Array<{ path: string; commit: string }>;
  /**
   * The oldest pytest that reads the project's config (absent: any, or pytest checks the
   * config's `minversion` itself): a native TOML config (`[tool.pytest]`, `pytest.toml`), which
   * pytest before 9.0 ignores without a word. A baseline stops before running the suite on an
   * older one. `from` names the config.
   */
  requiresPytest?: { version: string; from: string };
  /**
   * The lowest versions of its Debian packages the project's declared dependencies accept
   * (absent: none declared): `envgen env` and `inject` warn where the machine's are older.
   */
  requiredVersions?: RequiredVersion[];
  /** The distributions the project declares that Debian does not package (normalized names; absent: none). */
  unpackaged?: string[];
}
