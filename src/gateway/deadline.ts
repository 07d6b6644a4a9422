/**
 * One request's time budget, shared by every upstream attempt made for it. The timer and signal
 * are made only when an upstream call first asks for them (a cache hit makes none), and end with
 * the request (dispose), so no long timer outlives it.
 */
export class Deadline {
  private readonly expiresAt: number;
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly budgetMs: number) {
    this.expiresAt = performance.now() + budgetMs;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      const remaining = this.remainingMs();
      if (remaining <= 0) controller.abort(deadlineReached());
      else this.timer = setTimeout(() => controller.abort(deadlineReached()), remaining);
    }
    return this.controller.signal;
  }

  remainingMs(): number {
    return Math.max(0, this.expiresAt - performance.now());
  }

  get expired(): boolean {
    return this.controller?.signal.aborted === true || this.remainingMs() <= 0;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}

const deadlineReached = () => new DOMException('request deadline reached', 'TimeoutError');
