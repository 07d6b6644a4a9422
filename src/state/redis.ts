/**
 * Rate windows in Redis, shared by every replica: fixed per-second and per-minute counters per
 * account, checked and incremented by one Lua script so that no two replicas can both take the last
 * slot of a window.
 */
import { Redis } from 'ioredis';
import { WINDOW_MS, activeWindows, refusalOf, type RateLimits, type RateRefusal, type RateWindows, type WindowKind } from './store.js';

/**
 * KEYS: the window counters; ARGV: their limits, then their lifetimes in ms. Returns the (1-based)
 * positions of the full windows, counting nothing when there is any.
 */
const HIT_SCRIPT = `
local full = {}
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i]) then
    full[#full + 1] = i
  end
end
if #full == 0 then
  for i, key in ipairs(KEYS) do
    if redis.call('INCR', key) == 1 then
      redis.call('PEXPIRE', key, ARGV[#KEYS + i])
    end
  end
end
return full
`;

/** Keeps a counter past its window's end, so replicas whose clocks lag a little still find it. */
const EXPIRY_SLACK_MS = 5_000;

const KEY_LETTER = { second: 's', minute: 'm' } as const satisfies Record<WindowKind, string>;

type RateClient = Redis & {
  searchgateRateHit(numberOfKeys: number, ...keysThenArguments: (string | number)[]): Promise<number[]>;
};

export interface RedisRateWindowsOptions {
  /** redis://[user:password@]host:port[/db] */
  url: string;
  /** Namespaces the keys, e.g. per deployment sharing one Redis. */
  keyPrefix?: string;
}

export class RedisRateWindows implements RateWindows {
  private readonly redis: RateClient;
  private readonly keyPrefix: string;

  constructor(options: RedisRateWindowsOptions) {
    this.keyPrefix = options.keyPrefix ?? 'searchgate';
    const redis = new Redis(options.url, { lazyConnect: true });
    // ioredis sends EVALSHA and falls back to EVAL when Redis lost the script (restart, SCRIPT FLUSH).
    redis.defineCommand('searchgateRateHit', { lua: HIT_SCRIPT });
    this.redis = redis as RateClient;
  }

  async hit(accountId: string, limits: RateLimits, now: number): Promise<RateRefusal | undefined> {
    const windows = activeWindows(limits, now);
    if (windows.length === 0) return undefined;
    const full = await this.redis.searchgateRateHit(
      windows.length,
      ...windows.map((w) => `${this.keyPrefix}:rate:${accountId}:${KEY_LETTER[w.kind]}:${w.start}`),
      ...windows.map((w) => w.limit),
      ...windows.map((w) => WINDOW_MS[w.kind] + EXPIRY_SLACK_MS),
    );
    if (full.length === 0) return undefined;
    return refusalOf(
      full.map((position) => windows[position - 1]!.kind),
      limits,
      now,
    );
  }

  async close(): Promise<void> {
    if (this.redis.status === 'end' || this.redis.status === 'wait') {
      this.redis.disconnect();
      return;
    }
    await this.redis.quit();
  }
}
