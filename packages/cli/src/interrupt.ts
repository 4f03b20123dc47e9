/**
 * An `AbortController` aborted by the first Ctrl-C (SIGINT); a second Ctrl-C exits at once
 * with status 130. `dispose()` removes the handler.
 */
export function interruptController(onFirst: () => void): {
  signal: AbortSignal;
  interrupted: () => boolean;
  dispose: () => void;
} {
  const controller = new AbortController();
  const handler = (): void => {
    if (controller.signal.aborted) process.exit(130);
    onFirst();
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', handler);
  return {
    signal: controller.signal,
    interrupted: () => controller.signal.aborted,
    dispose: () => {
      process.off('SIGINT', handler);
    },
  };
}
