import { distributionsProviding, normalizeDistribution, quoteShellWord, requirementName } from '@envgen/repo';
import { describeOlder, installablePackages } from './host-packages.js';
import type { OlderPackage } from './host-packages.js';
import type { ImportedElsewhere } from '@envgen/testrun';
import type { EnvReport } from './env-command.js';

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${Math.round((100 * part) / whole)}%`;
}

function describeProfile(report: EnvReport): string[] {
  const { profile } = report;
  const env = Object.entries(profile.env).map(([key, value]) => `${key}=${value}`);
  // The command as a shell reads it back (`-o 'python_files=test_*.py tests.py'`), to be copied.
  const lines = [`${profile.python} -m pytest ${profile.testArgs.map(quoteShellWord).join(' ')}`.trimEnd()];
  if (env.length > 0) lines.push(`env ${env.join(' ')}`);
  if (profile.deselect.length > 0) lines.push(`deselected ${profile.deselect.length}: ${profile.deselect.join(' ')}`);
  // A multi-line step (envgen's installed metadata) is named by its first line, its comment.
  for (const step of profile.install) lines.push(`install ${(step.split('\n')[0] ?? '').replace(/^#\s*(?:envgen:\s*)?/, '')}`);
  if (profile.aptPackages.length > 0) lines.push(`debian packages ${profile.aptPackages.join(' ')}`);
  const sources = [...new Set(Object.values(profile.provenance))];
  if (sources.length > 0) lines.push(`from ${sources.join('; ')}`);
  return lines;
}

/** Groups of clean failures `envgen env` lists; `--json` has them all. */
const FAILURE_GROUPS_SHOWN = 5;

/**
 * Exceptions that say a clean test fails for want of something on the machine or in envgen's
 * environments, not in the code, and what to do about it (or why nothing can be done).
 */
const MACHINE_CAUSES: ReadonlyArray<{ pattern: RegExp; fix: (install: string) => string }> = [
  { pattern: /^locale\.Error: unsupported locale setting/, fix: (install) => `a locale this machine has not generated: ${install} locales-all` },
  {
    pattern: /Temporary failure in name resolution|Name or service not known|Network is unreachable|No address associated with hostname/,
    fix: () => 'the sandbox has no network: deselect them (a profile file\'s "deselect")',
  },
  {
    // PyMySQL's (2003, "Can't connect to MySQL server on 'localhost' ([Errno 111] Connection refused)"),
    // redis-py's "Error 111 connecting to localhost:6379. Connection refused.", psycopg's "port 5432 failed: Connection refused".
    pattern: /Connection refused|\[Errno 111\]|Error 111 connecting/,
    fix: () =>
      "a connection was refused: where the tests need a service running on this machine (a database, a cache), the sandbox's private loopback has none and these tests are in no instance; `--sandbox none` reaches the host's (unsandboxed: only on a machine you trust)",
  },
  {
    // GitPython's tests open its own clone (`rorepo`) and read commits of its history.
    pattern: /InvalidGitRepositoryError|fatal: not a git repository/,
    fix: () => "they read the project's own git repository, and envgen runs the tests, as the task environments hold them, in the tree without its history (a history would show the fix): these tests are in no instance",
  },
];

/** What the project declares that the machine cannot give as declared: distributions Debian does not package, installed packages older than declared. */
export interface DeclaredLacks {
  /** The profile's `unpackaged` (PEP 503 names). */
  unpackaged?: readonly string[];
  older?: readonly OlderPackage[];
}

/** The module an exception line says no path holds (`No module named 'a.b'`) or lacks a name (`cannot import name 'x' from 'a.b'`). */
const LACKING_MODULE = /ModuleNotFoundError: No module named '([^']+)'|ImportError: cannot import name '[^']+' from '([^']+)'/;

/**
 * What the machine or envgen's environments lack for a test that failed, or a test file that did not collect, with
 * `message` (its exception line), and how to get it (`: a locale this machine has not
 * generated: apt-get install -y locales-all`), or '' when the message names no such cause.
 * A module that a distribution the project declares provides is said so where Debian does not
 * package it (no `missing` row can name it) or the installed one is older than declared
 * (jquast/blessed: `wcwidth.table_vs16`, new in a wcwidth newer than Debian's).
 */
export function machineCause(message: string, install: string, lacks: DeclaredLacks = {}): string {
  const cause = MACHINE_CAUSES.find(({ pattern }) => pattern.test(message));
  if (cause !== undefined) return `: ${cause.fix(install)}`;
  const match = LACKING_MODULE.exec(message);
  const module = match?.[1] ?? match?.[2];
  if (module === undefined) return '';
  const elsewhere = "install it where the tests run by other means, or give the profile a python that has it (the config's profiles.<owner/name>.python)";
  const declared = distributionsProviding(module, lacks.unpackaged ?? []);
  if (declared.length > 0) return `: the project declares ${declared.join(', ')}, which Debian does not package: ${elsewhere}`;
  const older = (lacks.older ?? []).find((entry) => distributionsProviding(module, [normalizeDistribution(requirementName(entry.requirement) ?? '')]).length > 0);
  return older === undefined ? '' : `: the project declares ${older.requirement}, and the ${older.package} installed (${older.installed}) is older: ${elsewhere.replace('install it', 'install a newer one')}`;
}

/** How the packages a row names are installed where the tests run. */
export function installCommand(sandbox: string): string {
  return sandbox === 'docker' ? 'docker/build-base-image.sh' : 'apt-get install -y';
}

function failingRows(report: EnvReport, install: string): Array<[string, string]> {
  const lacks = { unpackaged: report.profile.unpackaged ?? [], older: report.olderAptPackages };
  const rows = report.failing.slice(0, FAILURE_GROUPS_SHOWN).map((group): [string, string] => {
    const example = group.count === 1 ? group.example : `${group.example}, …`;
    return ['failing', `${group.count} × ${group.reason} (${example})${machineCause(group.reason, install, lacks)}`];
  });
  const rest = report.failing.slice(FAILURE_GROUPS_SHOWN);
  if (rest.length > 0) rows.push(['', `${rest.reduce((sum, group) => sum + group.count, 0)} more, for ${rest.length} other reason(s) (--json lists them)`]);
  return rows;
}

/** The test files that did not collect, one row per exception line (the files it stopped, the first named). */
function collectionRows(report: EnvReport, install: string): Array<[string, string]> {
  const groups = new Map<string, string[]>();
  for (const error of report.collectionErrors) {
    const message = error.message.split('\n')[0] ?? '';
    groups.set(message, [...(groups.get(message) ?? []), error.nodeid]);
  }
  return [...groups].map(([message, files]): [string, string] => {
    const where = files.length === 1 ? files[0] : `${files.length} test files (${files[0]}, …)`;
    return ['collection', `${where}: ${message}${machineCause(message, install, { unpackaged: report.profile.unpackaged ?? [], older: report.olderAptPackages })}`];
  });
}

/** The human form of an `envgen env` report. */
export function formatEnvReport(report: EnvReport): string {
  const { tests, entities, coverage } = report;
  const rows: Array<[string, string]> = [
    ['repo', `${report.repo} @ ${report.commit}`],
    ['sandbox', report.sandbox],
    ...describeProfile(report).map((line, index): [string, string] => [index === 0 ? 'profile' : '', line]),
    ['files', `${report.sourceFiles} source · ${report.testFiles} test`],
    ['entities', `${entities.functions} functions · ${entities.methods} methods · ${entities.classes} classes`],
    ['tests', `${tests.passed} passed · ${tests.failed} failed · ${tests.error} errors · ${tests.skipped} skipped · ${tests.flaky} flaky`],
    ['suite', report.suiteSeconds.map((seconds) => `${seconds.toFixed(2)} s`).join(' / ') + (report.fromCache ? ' (cached baseline)' : '')],
    ['coverage', `${coverage.coveredFunctions} / ${coverage.allFunctions} functions covered by passing tests (${percent(coverage.coveredFunctions, coverage.allFunctions)})`],
  ];
  const install = installCommand(report.sandbox);
  rows.push(...collectionRows(report, install), ...failingRows(report, install));
  for (const nodeId of report.flaky.slice(0, 10)) rows.push(['flaky', nodeId]);
  for (const nodeId of report.untraced.slice(0, 10)) rows.push(['untraced', `${nodeId} (runs a profiler of its own: every candidate runs from before it)`]);
  const installable = installablePackages(report.missingAptPackages, report.unavailableAptPackages);
  if (installable.length > 0) rows.push(['missing', `${install} ${installable.join(' ')}`]);
  if (report.unavailableAptPackages.length > 0) rows.push(['not in apt', `${report.unavailableAptPackages.join(' ')} (not in this machine's Debian archive)`]);
  if (report.olderAptPackages.length > 0) rows.push(['older', `${describeOlder(report.olderAptPackages)}: the project declares newer versions`]);
  const services = [...new Set(report.ciServices.map((service) => service.from))].map((from) => `${report.ciServices.filter((service) => service.from === from).map((service) => service.name).join(', ')} (${from})`);
  if (services.length > 0) {
    // coleifer/huey's Redis and PostgreSQL: its Redis tests skip themselves where none answers.
    rows.push(['services', `${services.join('; ')}: the project's CI starts these beside its tests, and the sandbox has none (no network but its own loopback): tests that need one fail or skip, and are in no instance`]);
  }
  for (const submodule of report.profile.submodules ?? []) rows.push(['submodule', `${submodule.path} @ ${submodule.commit.slice(0, 8)} (checked out with the repo)`]);
  for (const entry of report.importedElsewhere) rows.push(['imported', `${entry.module} from ${entry.imported}, not the tree's ${entry.tree}`]);
  for (const note of report.notes) rows.push(['note', note]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const body = rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n');
  return `${body}\n\n${verdict(report)} (${report.seconds.toFixed(1)} s)`;
}

/** The clean suite passed without running any of the tree's functions (none of its tests ran a profiler of its own, which would hide them). */
export function ranNoCode(coverage: EnvReport['coverage'], untraced: readonly string[]): boolean {
  return coverage.coveredFunctions === 0 && coverage.allFunctions > 0 && untraced.length === 0;
}

/** Why no bug can be proved on a repo, in the words `env` and `inject` both use. */
export function cannotUse(repo: string, sandbox: string): string {
  return `envgen cannot use ${repo}: no test passed stably on its clean tree in the ${sandbox} sandbox, so no bug can be proved`;
}

/**
 * Why no bug can be proved in a repo whose passing tests ran none of its functions, and what
 * to do, in the words `env` and `inject` both use.
 */
export function ranNoTreeCode(repo: string, functions: number, elsewhere: readonly ImportedElsewhere[]): string {
  const where =
    elsewhere.length > 0
      ? `they import ${elsewhere
          .slice(0, 3)
          .map((entry) => `${entry.module} from ${entry.imported}, not the tree's ${entry.tree}`)
          .join('; ')}`
      : 'they import another copy of its code, an installed one, or run it only in processes of their own';
  const parent = elsewhere.map((entry) => entry.tree.slice(0, Math.max(0, entry.tree.lastIndexOf('/')))).find((dir) => dir !== '') ?? '<dir>';
  return (
    `envgen cannot use ${repo}: its tests pass but ran none of the tree's ${functions} functions (${where}), so no bug in them can be proved. ` +
    `If the tree's package lives in a directory its packaging config does not name, put that directory on the tests' path with a profile file: {"env": {"PYTHONPATH": "${parent}"}} (configs/profiles/README.md)`
  );
}

/** One sentence: can envgen use this repo? */
export function verdict(report: EnvReport): string {
  const { passed, flaky } = report.tests;
  if (passed === 0) {
    return cannotUse(report.repo, report.sandbox);
  }
  if (ranNoCode(report.coverage, report.untraced)) return ranNoTreeCode(report.repo, report.coverage.allFunctions, report.importedElsewhere);
  if (flaky > passed) {
    // Only stable passing tests can prove a bug: most candidates will find none that fails.
    return (
      `envgen can run ${report.repo}'s tests in the ${report.sandbox} sandbox, but most are flaky (${flaky} flaky, ${passed} stable passing): ` +
      'bugs are proved by stable tests only, so few will be kept; the `flaky` rows name them (their outcome changed between two clean runs: time, order, randomness or the machine)'
    );
  }
  // Test files that did not collect hold tests no bug can be proved by, and so do tests that
  // fail clean: said with the verdict, not only in their rows.
  const buts: string[] = [];
  const failing = report.tests.failed + report.tests.error;
  if (failing > passed) {
    // rq/rq without the Redis server its tests need: 471 errors, 1 test passing, 2 of 751 functions covered.
    const { coveredFunctions, allFunctions } = report.coverage;
    buts.push(`most of its tests fail on the clean tree (${failing} failing, ${passed} passing; the \`failing\` rows say why): bugs go only where passing tests run, ${coveredFunctions} of ${allFunctions} functions`);
  }
  const uncollected = report.collectionErrors.length;
  if (uncollected > 0) buts.push(`${uncollected} test file(s) did not collect (the \`collection\` rows say why): their tests are in no instance`);
  return `envgen can run ${report.repo}'s tests safely in the ${report.sandbox} sandbox${buts.length === 0 ? '' : `, but ${buts.join('; and ')}`}`;
}
