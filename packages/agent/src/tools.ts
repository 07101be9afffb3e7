/** A tool offered to the model, in the OpenAI `tools` shape. */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Name of the shell tool. */
export const TERMINAL_TOOL_NAME = 'terminal';
/** Name of the tool that ends an episode with the answer. */
export const LOCALIZATION_FINISH_TOOL_NAME = 'localization_finish';

/**
 * `terminal {command, timeout?}`: one bash command in the persistent shell on the checkout.
 * `timeout` is in seconds, as in OpenHands' terminal tool.
 */
export const TERMINAL_TOOL: ToolSchema = {
  type: 'function',
  function: {
    name: TERMINAL_TOOL_NAME,
    description: [
      'Run a bash command in a persistent shell opened on the repository (the working directory, exported variables and functions carry over between calls).',
      'Use it to explore the code: rg, grep, find, ls, sed -n, head, cat, python3 -c. There is no network and nothing interactive: a command reads no input.',
      'Output (stdout and stderr together) longer than 30000 characters is cut in the middle, so search narrowly and print line ranges rather than whole large files.',
      'A command still running at its timeout is killed.',
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The bash command to run. Several commands may be joined with && or ;.' },
        timeout: { type: 'number', description: 'Optional: seconds before the command is killed (default 30).' },
      },
      required: ['command'],
    },
  },
};

/** `localization_finish {locations: [{file, class_name?, function_name?}]}`: the answer; ends the episode. */
export const LOCALIZATION_FINISH_TOOL: ToolSchema = {
  type: 'function',
  function: {
    name: LOCALIZATION_FINISH_TOOL_NAME,
    description: [
      'Submit the code locations that must change to resolve the issue. This ends the episode: call it once, when you are done.',
      'Give one entry per place to edit:',
      '- a method of a class: file, class_name and function_name;',
      '- a function outside any class: file and function_name;',
      '- class-level code outside its methods (attributes, base classes, a new method): file and class_name;',
      '- module-level code (imports, constants, a new top-level function or class): file only.',
      'Paths are relative to the repository root, without a leading ./ or /. Several edits in one file are separate entries; do not repeat an identical entry.',
      'Aim for both precision (every entry needs a change) and recall (no place that needs a change is missing).',
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: {
        locations: {
          type: 'array',
          description: 'The locations to modify.',
          items: {
            type: 'object',
            properties: {
              file: { type: 'string', description: 'Path of the file relative to the repository root (required).' },
              class_name: { type: 'string', description: 'The enclosing class, for methods and class-level code (optional).' },
              function_name: { type: 'string', description: 'The function or method name, without the class (optional).' },
            },
            required: ['file'],
          },
        },
      },
      required: ['locations'],
    },
  },
};

/** The two tools of the CodeScout scaffold, in the order they are offered. */
export const AGENT_TOOLS: readonly ToolSchema[] = [TERMINAL_TOOL, LOCALIZATION_FINISH_TOOL];
