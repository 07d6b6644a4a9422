/**
 * A signal that aborts when `parent` does or after `ms`, whichever comes first; call dispose() when
 * done. Not AbortSignal.timeout(): inside AbortSignal.any() nothing keeps that signal alive, and a
 * garbage collection would silently drop the timeout (nodejs/node#57736, still in Node 20).
 */
export function signalWithTimeout(parent: AbortSignal, ms: number, reason = 'timed out'): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(reason, 'TimeoutError')), ms);
  return {
    signal: AbortSignal.any([parent, controller.signal]),
    dispose: () => clearTimeout(timer),
  };
}
