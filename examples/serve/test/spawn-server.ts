import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A server process started as `npm run serve` starts it, and its address. */
export interface SpawnedServer {
  readonly process: ChildProcess;
  readonly url: string;
  /** Everything it has written so far (its JSON log lines, then any error). */
  logs(): string;
}

/**
 * Starts `src/main.ts` through tsx with `args` and `--port 0`, and resolves once its log says
 * where it listens (rejects if it exits first).
 */
export function spawnServer(args: readonly string[]): Promise<SpawnedServer> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('../src/main.ts', import.meta.url)),
      ...args,
      '--port',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let logs = '';
  const record = (data: unknown) => {
    logs += String(data);
  };
  child.stdout!.on('data', record);
  child.stderr!.on('data', record);
  return new Promise((resolve, reject) => {
    const listening = () => {
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs);
      if (match === null) return;
      child.stdout!.off('data', listening);
      resolve({ process: child, url: match[1]!, logs: () => logs });
    };
    child.stdout!.on('data', listening);
    child.once('exit', () => reject(new Error(`the server exited before listening:\n${logs}`)));
  });
}
