import type { FastifyReply } from 'fastify';

/**
 * A server-sent-events response (`text/event-stream`, one `data: <json>` event per chunk, then
 * `data: [DONE]`) that takes the response over from the framework only when its first event is
 * sent: until then, an error (the request refused as over capacity, say) can still be answered
 * as an ordinary JSON error with its status.
 */
export class EventStream {
  private open = false;

  /**
   * @param reply the framework's reply it takes over.
   * @param closing whether the connection should close after this response (a draining server).
   */
  constructor(
    private readonly reply: FastifyReply,
    private readonly closing: () => boolean = () => false,
  ) {}

  /** Whether an event was sent (the status and headers are gone). */
  get started(): boolean {
    return this.open;
  }

  /** Sends one event holding `data` as JSON. */
  send(data: unknown): void {
    this.start();
    this.reply.raw.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Sends `data: [DONE]` and ends the response. */
  done(): void {
    this.start();
    this.reply.raw.end('data: [DONE]\n\n');
  }

  /** Ends a started stream after an error, with the error as its last event. */
  fail(body: unknown): void {
    if (this.reply.raw.writableEnded) return;
    this.reply.raw.end(`data: ${JSON.stringify(body)}\n\n`);
  }

  private start(): void {
    if (this.open) return;
    this.open = true;
    this.reply.hijack();
    this.reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: this.closing() ? 'close' : 'keep-alive',
    });
  }
}
