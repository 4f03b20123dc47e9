/**
 * Resolves on a later turn of the event loop, after pending I/O and timers had their turn — how a
 * long-running loop lets an HTTP server (or a page) stay responsive between its steps. Uses
 * `setImmediate` where the runtime has it (Node), else a `MessageChannel` message (browsers, which
 * clamp nested `setTimeout`s to 4 ms), else `setTimeout(0)`. No import: browser-safe.
 */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => {
    const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown })
      .setImmediate;
    if (typeof immediate === 'function') {
      immediate(resolve);
    } else if (typeof MessageChannel === 'function') {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(undefined);
    } else {
      setTimeout(resolve, 0);
    }
  });
}
