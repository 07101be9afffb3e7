import { BUNDLE_FILE_NAMES } from '@envgen/core';
import { STR_REPLACE_EDITOR_TOOL, TERMINAL_TOOL } from '@envgen/agent';
import type { ToolSchema } from '@envgen/agent';

/** Name of the tool that ends a self-play episode. */
export const SUBMIT_TOOL_NAME = 'submit';

/** The solver's `submit {}`: its patch is the checkout's diff from the initial commit. */
export const REPAIR_SUBMIT_TOOL: ToolSchema = {
  type: 'function',
  function: {
    name: SUBMIT_TOOL_NAME,
    description: [
      'Submit your fix and end the episode. Your patch is the diff of the repository against its initial commit (what `git diff` shows, new files included).',
      'It must change source files only: the test files are restored before the patch is evaluated, so a diff touching them is refused and you are asked to revert those changes first.',
    ].join('\n'),
    parameters: { type: 'object', properties: {}, required: [] },
  },
};

/** The injector's `submit {<bundle file>: path, ...}`: the five bundle files it wrote. */
export const INJECTOR_SUBMIT_TOOL: ToolSchema = {
  type: 'function',
  function: {
    name: SUBMIT_TOOL_NAME,
    description: [
      'Submit your bug bundle and end the episode: the paths of the five files you wrote, each inside the repository (absolute, e.g. /tmp/repo/_bundle/bug_inject.diff, or relative to the repository root).',
      'The files are read as they are when you call submit; the bundle is then checked against a clean copy of the repository.',
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: Object.fromEntries(BUNDLE_FILE_NAMES.map((name) => [name, { type: 'string', description: `Path of ${name}.` }])),
      required: [...BUNDLE_FILE_NAMES],
    },
  },
};

/** The solver's tools, in the order they are offered. */
export const REPAIR_TOOLS: readonly ToolSchema[] = [TERMINAL_TOOL, STR_REPLACE_EDITOR_TOOL, REPAIR_SUBMIT_TOOL];
/** The injector's tools, in the order they are offered. */
export const INJECTOR_TOOLS: readonly ToolSchema[] = [TERMINAL_TOOL, STR_REPLACE_EDITOR_TOOL, INJECTOR_SUBMIT_TOOL];
