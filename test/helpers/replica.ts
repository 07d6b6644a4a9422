/**
 * A gateway replica in its own process (gateway-process.ts), for the multi-replica tests: its own
 * environment, its log on stderr kept for the test to read, and the parent's clock to set.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { ExecutionContext } from 'ava';

export interface Replica {
  url: string;
  setNow(ms: number): Promise<void>;
  /** What the replica logged so far. */
  log(): string;
  /** Ends the process (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

export async function startReplica(t: ExecutionContext, config: object, env: NodeJS.ProcessEnv = {}): Promise<Replica> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [new URL('./gateway-process.js', import.meta.url).pathname, JSON.stringify(config)], {
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  t.teardown(() => {
    child.stdin.end();
    child.kill();
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`replica exited: ${stderr.slice(-500)}`);
    return value as string;
  };
  const port = /^listening (\d+)$/.exec(await next())?.[1];
  return {
    url: `http://127.0.0.1:${port}`,
    async setNow(ms) {
      child.stdin.write(`now ${ms}\n`);
      if ((await next()) !== 'ok') throw new Error('replica did not set its clock');
    },
    log: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      child.kill();
      await exited;
    },
  };
}
