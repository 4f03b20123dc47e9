import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A server process, its address, and what it has written. */
export interface SpawnedServer {
  readonly process: ChildProcess;
  readonly url: string;
  /** Everything it has written so far (its JSON log lines, then any error). */
  logs(): string;
}

/** How to start the server: `src/main.ts` through tsx's loader, or as a user does, `npm run serve`. */
export type Launcher = 'node' | 'npm';

/**
 * Starts the server with `args` and `--port 0` — `node --import tsx src/main.ts` or
 * `npm run serve -- …` — and resolves once its log says where it listens (rejects if it exits
 * first).
 */
export function spawnServer(
  args: readonly string[],
  launcher: Launcher = 'node',
): Promise<SpawnedServer> {
  const serverArgs = [...args, '--port', '0'];
  const child =
    launcher === 'node'
      ? spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            fileURLToPath(new URL('../src/main.ts', import.meta.url)),
            ...serverArgs,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        )
      : spawn('npm', ['run', '--silent', 'serve', '--', ...serverArgs], {
          cwd: fileURLToPath(new URL('..', import.meta.url)),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
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
