/**
 * A signal that aborts when `parent` does or after `ms`, whichever comes first; call dispose() when
 * done. Built from one controller, one timer and one listener rather than AbortSignal.any() over
 * AbortSignal.timeout(): inside any() nothing keeps the timeout signal alive, so a garbage collection
 * would silently drop it (nodejs/node#57736, still in Node 20), and any() costs more per call.
 */
export function signalWithTimeout(parent: AbortSignal, ms: number, reason = 'timed out'): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose() {} };
  }
  const onParentAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onParentAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException(reason, 'TimeoutError')), ms);
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}
