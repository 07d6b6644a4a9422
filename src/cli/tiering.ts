/**
 * When V8 optimises a batch's code.
 *
 * V8 hands a function to its optimising compiler once the function has run a budget of bytecode
 * (its interrupt budget; 66 KiB on Node 20). A batch process starts every extraction worker cold,
 * and each worker compiles the same extractor again. At the default budget a worker optimises
 * functions before their type feedback has settled, and then throws much of that code away. On
 * extraction-dev's report half, one cold pass optimised 964 functions, with 352 deoptimisations and
 * 4.5 s of compiling. At six times the budget it optimised 560, with 179 deoptimisations and 1.8 s
 * of compiling. The compiling runs on V8's helper threads, which compete with the workers for the
 * cores. Side by side (bench:extraction-batch-ab, 2 workers), a batch of the report half's 664 pages
 * then takes 0.92× the CPU and wall time; one of 100 pages 0.81×, one of 4,029 pages 0.99×: the
 * saving is each worker's cold start (docs/benchmarks.md, issue 22, twenty-seventh session).
 * Larger budgets measured no better.
 *
 * The flag is process-wide and is read when a function's feedback is created. Setting it before
 * the pool starts reaches every worker's code from its first call. A long-running gateway warms
 * its workers once, so it keeps V8's default.
 */
import { setFlagsFromString } from 'node:v8';

/** Six times Node 20's default interrupt budget (67,584 bytes of bytecode). */
const BATCH_INTERRUPT_BUDGET = 6 * 67_584;

/** Lets a batch's functions run longer before V8 optimises them: set before its workers start. */
export function optimiseLaterForBatch(): void {
  setFlagsFromString(`--interrupt-budget=${BATCH_INTERRUPT_BUDGET}`);
}
