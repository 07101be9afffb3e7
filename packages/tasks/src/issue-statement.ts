import OpenAI from 'openai';
import { EnvgenError, describeError } from '@envgen/core';
import type { TokenUsage } from '@envgen/core';
import type { FailingTest } from './statements.js';
import { trimMiddle } from './statements.js';

/**
 * Style examples in the shape of real GitHub bug reports (title, what was run, expected,
 * actual, versions). Written for envgen; pass `examples` (e.g. issues from your own tracker) to
 * replace them.
 */
export const DEFAULT_ISSUE_EXAMPLES: readonly string[] = [
  `# merge_with drops keys that only appear in the last mapping

When I merge three dicts with \`merge_with(sum, a, b, c)\`, keys that exist only in \`c\` are missing from the result.

\`\`\`python
>>> merge_with(sum, {'x': 1}, {'x': 2}, {'y': 3})
{'x': 3}
\`\`\`

I expected \`{'x': 3, 'y': [3]}\`-style output, i.e. \`y\` should be there. With two dicts it works fine.

Version: 0.12.0, Python 3.11 on Debian.`,
  `# Parsing a document with an empty list raises IndexError

Loading a file that contains \`key: []\` now fails:

\`\`\`
Traceback (most recent call last):
  ...
IndexError: list index out of range
\`\`\`

This used to work and I don't think an empty list is unusual. Expected: \`{'key': []}\`.`,
  `# \`unique(seq, key=...)\` returns duplicates when key is given

\`\`\`python
list(unique(['cat', 'mouse', 'dog', 'hen'], key=len))
# got:      ['cat', 'mouse', 'dog', 'hen']
# expected: ['cat', 'mouse']
\`\`\`

Without \`key\` the function behaves as documented. Looks like the key is not used when checking what was already seen?`,
];

const SYSTEM_PROMPT = `You write GitHub issues the way a user of a Python library files them after hitting a bug.
You are shown a bug that was introduced into the library (as a diff), the tests that now fail and their output.
Write the issue that user would file: a title line starting with "# ", then what they ran (a short snippet using the public API), what they expected and what happened instead.
Rules:
- Describe behaviour only. Never name source files, paths, line numbers, or say which function's code is wrong or how to fix it.
- Never quote or paraphrase the diff; the reader must not be able to tell where the bug is from the issue.
- Do not mention tests or test files; the user found this in their own code.
- Plain Markdown, under 250 words. Answer with the issue only.`;

/** What the issue writer is shown about one bug. */
export interface IssueStatementInput {
  /** `owner/name`. */
  repo: string;
  /** The bug diff (clean → buggy). */
  patch: string;
  failing: readonly FailingTest[];
  /** pytest's output for the failing tests. */
  failureOutput: string;
  /**
   * Strings that reveal the fix (changed file paths and names, the fix's own lines); an issue
   * containing one is sent back for a rewrite.
   */
  forbidden: readonly string[];
}

/** The endpoint and model of {@link writeIssueStatement}. */
export interface IssueWriterOptions {
  model: string;
  /** OpenAI-compatible base URL, e.g. `http://localhost:8000/v1` (default: the `openai` package's). */
  baseURL?: string;
  apiKey?: string;
  /** Style examples; default {@link DEFAULT_ISSUE_EXAMPLES}. */
  examples?: readonly string[];
  /** Tries per instance when an answer is empty or names the fix's location. Default 3. */
  maxAttempts?: number;
  temperature?: number;
  /** Request timeout, ms. Default 120 000. */
  timeoutMs?: number;
}

/** An issue written by the model, with what it cost. */
export interface WrittenIssue {
  text: string;
  model: string;
  usage: TokenUsage;
  attempts: number;
}

/** The first forbidden string `text` contains, or null. */
export function findLeak(text: string, forbidden: readonly string[]): string | null {
  return forbidden.find((needle) => needle !== '' && text.includes(needle)) ?? null;
}

/**
 * The strings that give away a fix: each changed file's path and file name, and each line the
 * fix restores (the bug's removed lines) that is long enough to be distinctive.
 */
export function fixRevealingStrings(patch: string): string[] {
  const found = new Set<string>();
  for (const line of patch.split('\n')) {
    const header = /^(?:---|\+\+\+) [ab]\/(.+)$/.exec(line);
    if (header?.[1] !== undefined) {
      found.add(header[1]);
      found.add(header[1].split('/').at(-1) ?? header[1]);
    } else if (line.startsWith('-') && !line.startsWith('---') && line.slice(1).trim().length >= 20) {
      found.add(line.slice(1).trim());
    }
  }
  return [...found];
}

function userMessage(input: IssueStatementInput, examples: readonly string[]): string {
  const tests = input.failing
    .slice(0, 3)
    .map((test) => `${test.nodeId}${test.source === null ? '' : `\n\`\`\`python\n${trimMiddle(test.source, 3000)}\n\`\`\``}`)
    .join('\n\n');
  return [
    `Examples of the style wanted:\n\n${examples.map((example, index) => `--- example ${index + 1} ---\n${example}`).join('\n\n')}`,
    `Repository: ${input.repo}`,
    `The bug (a diff that introduced it):\n\`\`\`diff\n${trimMiddle(input.patch, 6000)}\n\`\`\``,
    `Tests that now fail:\n${tests}`,
    `Their output:\n\`\`\`\n${trimMiddle(input.failureOutput, 3000)}\n\`\`\``,
    'Write the issue now.',
  ].join('\n\n');
}

/**
 * Asks an OpenAI-compatible endpoint for a GitHub-style issue about a bug, told not to name
 * the fix's location; answers that are empty or contain a revealing string are sent back with
 * the reason, up to `maxAttempts` tries. Token usage is summed over the tries.
 */
export async function writeIssueStatement(input: IssueStatementInput, options: IssueWriterOptions): Promise<WrittenIssue> {
  const client = new OpenAI({
    apiKey: options.apiKey ?? 'not-needed',
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    timeout: options.timeoutMs ?? 120_000,
    maxRetries: 2,
  });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: userMessage(input, options.examples ?? DEFAULT_ISSUE_EXAMPLES) },
  ];
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const maxAttempts = options.maxAttempts ?? 3;
  let problem = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await client.chat.completions.create({
        model: options.model,
        messages,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      });
    } catch (error) {
      throw new EnvgenError('llm-failed', `the model endpoint ${options.baseURL ?? '(openai default)'} failed: ${describeError(error)}; check --base-url, --model and the API key`, {
        cause: error,
      });
    }
    usage.prompt_tokens += completion.usage?.prompt_tokens ?? 0;
    usage.completion_tokens += completion.usage?.completion_tokens ?? 0;
    usage.total_tokens += completion.usage?.total_tokens ?? 0;
    const text = (completion.choices[0]?.message.content ?? '').trim();
    const leak = text === '' ? null : findLeak(text, input.forbidden);
    if (text !== '' && leak === null) return { text, model: completion.model || options.model, usage, attempts: attempt };
    problem = text === '' ? 'the answer was empty' : `the issue contains "${leak}", which reveals where the fix goes`;
    messages.push({ role: 'assistant', content: text }, { role: 'user', content: `Rewrite it: ${problem}. Follow the rules.` });
  }
  throw new EnvgenError('llm-failed', `the model gave no usable issue for ${input.repo} in ${maxAttempts} tries (${problem}); try another model or --statement tests`);
}
