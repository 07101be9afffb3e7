import { main } from './main.js';

/** What one in-process run of the CLI printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `envgen <argv> --home <home>` in-process with HOME set to `home`, capturing its output. */
export async function runCli(argv: string[], home: string): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main([...argv, '--home', home], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { HOME: home },
  });
  return { code, stdout, stderr };
}
