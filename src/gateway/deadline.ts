/** One request's time budget, shared by every upstream attempt made for it. */
export class Deadline {
  readonly signal: AbortSignal;
  private readonly expiresAt: number;

  constructor(readonly budgetMs: number) {
    this.signal = AbortSignal.timeout(budgetMs);
    this.expiresAt = performance.now() + budgetMs;
  }

  remainingMs(): number {
    return Math.max(0, this.expiresAt - performance.now());
  }

  get expired(): boolean {
    return this.signal.aborted || this.remainingMs() <= 0;
  }
}
