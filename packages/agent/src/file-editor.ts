import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import type { Sandbox, SandboxProvider } from '@envgen/sandbox';
import type { ToolSchema } from './tools.js';

/** Name of the file editor tool (SWE-agent's and OpenHands' name). */
export const STR_REPLACE_EDITOR_TOOL_NAME = 'str_replace_editor';

/** The editor's commands, as SWE-agent and OpenHands name them. */
export const EDITOR_COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;
export type EditorCommand = (typeof EDITOR_COMMANDS)[number];

/** `str_replace_editor {command, path, ...}`: view, create and edit files of the checkout. */
export const STR_REPLACE_EDITOR_TOOL: ToolSchema = {
  type: 'function',
  function: {
    name: STR_REPLACE_EDITOR_TOOL_NAME,
    description: [
      'View, create and edit files of the repository.',
      '* `view` on a file prints it with line numbers (`cat -n`), on a directory lists it two levels deep (hidden items excluded); `view_range` [start, end] shows lines start to end (end -1: to the end of the file).',
      '* `create` writes a new file with `file_text`; it never overwrites an existing file.',
      '* `str_replace` replaces `old_str`, which must occur exactly once in the file (include enough context to make it unique), with `new_str` (empty: delete it). Whitespace must match exactly.',
      '* `insert` inserts `new_str` after line `insert_line` (0: at the top).',
      '* `undo_edit` reverts the last edit made to the file by this tool.',
      'Paths are absolute (e.g. /tmp/repo/pkg/module.py) or relative to the repository root; they must stay inside the repository: ".." and symlinks are refused.',
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: [...EDITOR_COMMANDS], description: 'The command to run.' },
        path: { type: 'string', description: 'Absolute path of the file or directory, inside the repository.' },
        file_text: { type: 'string', description: '`create`: the content of the new file.' },
        old_str: { type: 'string', description: '`str_replace`: the exact text to replace (must occur once).' },
        new_str: { type: 'string', description: '`str_replace`: the replacement (default empty); `insert`: the text to insert.' },
        insert_line: { type: 'integer', description: '`insert`: the line after which `new_str` goes (0: the top).' },
        view_range: { type: 'array', items: { type: 'integer' }, description: '`view` of a file: [start, end] line numbers, 1-based; end -1 means the end of the file.' },
      },
      required: ['command', 'path'],
    },
  },
};

/** The editor's Python, run inside the sandbox for each call (see the file's docstring). */
const EDITOR_SCRIPT = readFileSync(fileURLToPath(new URL('../editor/envgen_editor.py', import.meta.url)), 'utf8');

/** Options of {@link openFileEditor}. */
export interface OpenFileEditorOptions {
  provider: SandboxProvider;
  /** Host directory of the checkout; the editor works only inside it. */
  worktree: string;
  /** docker: the image. */
  image?: string;
  /** Interpreter inside the sandbox (default `python3`). */
  python?: string;
  /** Wall-clock limit of one call (default 20 s). */
  timeoutMs?: number;
  /** Characters of one answer before it is cut (default 30,000). */
  maxOutputChars?: number;
}

/** A file read out of the sandbox, or why it could not be. */
export type EditorRead = { ok: true; path: string; text: string } | { ok: false; error: string };

/** The `str_replace_editor` tool of one episode, with its undo history. */
export interface FileEditor {
  /** The checkout's path as the sandbox shows it. */
  readonly workdir: string;
  /** Runs one tool call (the parsed arguments) and returns the text of its `tool` message. */
  run(args: Record<string, unknown>): Promise<string>;
  /** Reads a text file of the checkout through the sandbox, with the editor's path rules. */
  read(path: string): Promise<EditorRead>;
  /** Releases the sandbox. Idempotent. */
  close(): Promise<void>;
}

type EditorAnswer = { ok: true; path: string; output: string; previous?: string | null } | { ok: false; error: string };

/**
 * Opens the editor on a checkout. Every call runs `envgen_editor.py` in the sandbox, so a
 * path the model gives can only ever reach what the sandbox shows writable (the checkout);
 * inside it, ".." and symlinks on the way are refused too. The undo history (the text of a
 * file before each edit) is kept on the host.
 */
export async function openFileEditor(options: OpenFileEditorOptions): Promise<FileEditor> {
  const sandbox: Sandbox = await options.provider.open({
    worktree: options.worktree,
    limits: { timeoutMs: options.timeoutMs ?? 20_000, maxOutputBytes: 8 * 1024 ** 2, maxProcesses: 16, memoryBytes: 512 * 1024 ** 2 },
    ...(options.image === undefined ? {} : { image: options.image }),
  });
  const history = new Map<string, Array<string | null>>();
  const maxChars = options.maxOutputChars ?? 30_000;
  let closed = false;

  const call = async (request: Record<string, unknown>): Promise<EditorAnswer> => {
    if (closed) throw new EnvgenError(ERROR_CODES.usage, 'This editor was closed: open a new one.');
    const result = await sandbox.exec([options.python ?? 'python3', '-c', EDITOR_SCRIPT, sandbox.workdir], { stdin: JSON.stringify(request) });
    if (result.status !== 'exited' || result.exitCode !== 0) {
      return { ok: false, error: `the editor did not finish (${result.status}${result.exitCode === null ? '' : `, exit code ${result.exitCode}`}): ${result.stderr.trim().slice(-300)}` };
    }
    try {
      return JSON.parse(result.stdout) as EditorAnswer;
    } catch {
      return { ok: false, error: `the editor's answer is not JSON: ${result.stdout.slice(0, 200)}` };
    }
  };
  const cut = (text: string): string =>
    text.length <= maxChars ? text : `${text.slice(0, maxChars)}\n[... ${text.length - maxChars} characters omitted: view a narrower view_range ...]`;

  return {
    workdir: sandbox.workdir,
    async run(args) {
      const command = args['command'];
      const path = args['path'];
      if (typeof command !== 'string' || !(EDITOR_COMMANDS as readonly string[]).includes(command)) {
        return `Error: str_replace_editor needs "command", one of ${EDITOR_COMMANDS.join(', ')}.`;
      }
      if (typeof path !== 'string' || path.trim() === '') return `Error: str_replace_editor ${command} needs "path", the absolute path of a file under ${sandbox.workdir}.`;
      if (command === 'undo_edit') {
        const located = await call({ op: 'locate', path });
        if (!located.ok) return `Error: ${located.error}`;
        const key = located.path;
        const stack = history.get(key);
        const previous = stack?.pop();
        if (stack === undefined || previous === undefined) return `Error: no edit of ${path} to undo.`;
        const restored = await call({ op: 'restore', path: key, content: previous });
        if (!restored.ok) return `Error: ${restored.error}`;
        return previous === null ? `Undid the creation of ${key}: the file is removed.` : `Last edit to ${key} undone successfully.`;
      }
      const answer = await call({ ...args, op: command });
      if (!answer.ok) return `Error: ${answer.error}`;
      if (answer.previous !== undefined) {
        const stack = history.get(answer.path) ?? [];
        stack.push(answer.previous);
        history.set(answer.path, stack);
      }
      return cut(answer.output);
    },
    async read(path) {
      const answer = await call({ op: 'read', path });
      return answer.ok ? { ok: true, path: answer.path, text: answer.output } : answer;
    },
    async close() {
      if (closed) return;
      closed = true;
      await sandbox.dispose();
    },
  };
}
