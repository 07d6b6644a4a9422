/** What several benchmarks share: the machine description their reports carry, and a watchdog. */
import os from 'node:os';

export interface MachineDescription {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  loadAverageAtStart: number[];
}

export function machineDescription(): MachineDescription {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtStart: os.loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

/** Ends the run if it overstays, so a hung benchmark never outlives its time box. */
export function startWatchdog(maxSeconds: number, name: string): void {
  setTimeout(() => {
    console.error(`${name}: stopped by the watchdog after ${maxSeconds} s`);
    process.exit(3);
  }, maxSeconds * 1000).unref();
}
