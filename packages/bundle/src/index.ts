export { readBundle, writeBundle, DEFAULT_MAX_BUNDLE_FILE_BYTES } from './bundle-files.js';
export type { ReadBundleOptions } from './bundle-files.js';
export { makeTestWeaken } from './test-weaken.js';
export type { MakeTestWeakenOptions, TestWeaken, WeakenRemoval } from './test-weaken.js';
export { makeTestScript, makeTestParser, RESULT_MARKER } from './test-script.js';
export { bundleRunLimits, createBundleRunner, readParserOutput } from './bundle-runner.js';
export type { BundleRun, BundleRunLimits, BundleRunner, BundleTestStatus, CreateBundleRunnerOptions } from './bundle-runner.js';
export { checkBundle, parseTestFilesList, CHECK_NAMES, DEFAULT_THRESHOLDS } from './check-bundle.js';
export type { BundleCheckReport, CheckBundleOptions, CheckName, CheckResult, CheckThresholds } from './check-bundle.js';
