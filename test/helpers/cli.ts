/** Runs the searchgate CLI in a child process, as an operator's shell would, and collects what it said. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Beside this file's compiled copy, so it is the build under test whatever the cwd or outDir. */
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface CliRun {
  /** null when a signal ended the process. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Written to the CLI's stdin, which is then closed; without it stdin is closed empty. */
  stdin?: string;
  /** A hung CLI is killed after this long (default 50 s): the test then fails on its output, not on AVA's silent 60 s timeout. */
  timeoutMs?: number;
  /** Sees stderr as it grows: a test can act on progress, such as interrupting a crawl midway. */
  onStderr?: (soFar: string, child: ChildProcess) => void;
}

export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      options.onStderr?.(stderr, child);
    });
    // A CLI that exits before reading its stdin makes the write fail with EPIPE; its exit code is the result.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 50_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // 'close', not 'exit': 'exit' can come before stdout and stderr are drained, and the output would be cut short.
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
