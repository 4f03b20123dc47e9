import { UnpagedCache } from './unpaged-cache';

/**
 * A deliberately broken {@link UnpagedCache}: `keep` protects only the recent window, never the
 * attention sinks. The contract tests run it to show that their comparisons catch a cache that
 * gets the anchors wrong.
 */
export class ForgetfulAnchorsCache extends UnpagedCache {
  protected override isAnchor(
    entry: { readonly position: number; readonly appendIndex: number },
    length: number,
  ): boolean {
    return entry.appendIndex >= length - this.anchors.window;
  }
}
