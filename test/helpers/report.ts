/**
 * For child processes that a test kills with SIGKILL: a line reported with this is in the pipe
 * before the child goes on. process.stdout on a Linux pipe writes at once only while the pipe has
 * room; when the parent falls behind, Node queues the line in the child's memory, and a kill then
 * loses it. Awaiting the write's callback keeps "reported" a true record of what happened.
 */
export function report(line: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(`${line}\n`, (error) => (error ? reject(error) : resolve())));
}
