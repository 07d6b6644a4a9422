/**
 * Rate windows in Redis, shared by every replica: fixed per-second and per-minute counters per
 * account, checked and incremented by one Lua script so that no two replicas can both take the last
 * slot of a window.
 */
import { Redis } from 'ioredis';
import { WINDOW_MS, activeWindows, perSecondState, refusalOf, type RateHit, type RateLimits, type RateWindows, type WindowKind } from './store.js';

/**
 * KEYS: the window counters; ARGV: their limits, then their lifetimes in ms. Returns the (1-based)
 * positions of the full windows, counting nothing when there is any, and every counter's value
 * after the hit.
 */
const HIT_SCRIPT = `
local full = {}
local counts = {}
for i, key in ipairs(KEYS) do
  counts[i] = tonumber(redis.call('GET', key) or '0')
  if counts[i] >= tonumber(ARGV[i]) then
    full[#full + 1] = i
  end
end
if #full == 0 then
  for i, key in ipairs(KEYS) do
    counts[i] = redis.call('INCR', key)
    if counts[i] == 1 then
      redis.call('PEXPIRE', key, ARGV[#KEYS + i])
    end
  end
end
return {full, counts}
`;

/** Keeps a counter past its window's end, so replicas whose clocks lag a little still find it. */
const EXPIRY_SLACK_MS = 5_000;

const KEY_LETTER = { second: 's', minute: 'm' } as const satisfies Record<WindowKind, string>;

type RateClient = Redis & {
  /** The full windows' positions (1-based) and every counter after the hit, in KEYS order. */
  searchgateRateHit(numberOfKeys: number, ...keysThenArguments: (string | number)[]): Promise<[number[], number[]]>;
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

  async hit(accountId: string, limits: RateLimits, now: number): Promise<RateHit> {
    const windows = activeWindows(limits, now);
    if (windows.length === 0) return { refusal: undefined, perSecond: null };
    const [full, counts] = await this.redis.searchgateRateHit(
      windows.length,
      ...windows.map((w) => `${this.keyPrefix}:rate:${accountId}:${KEY_LETTER[w.kind]}:${w.start}`),
      ...windows.map((w) => w.limit),
      ...windows.map((w) => WINDOW_MS[w.kind] + EXPIRY_SLACK_MS),
    );
    const second = windows.findIndex((w) => w.kind === 'second');
    return {
      refusal: full.length ? refusalOf(full.map((position) => windows[position - 1]!.kind), limits, now) : undefined,
      perSecond: perSecondState(limits, counts[second] ?? 0),
    };
  }

  close(): Promise<void> {
    return closeRedis(this.redis);
  }
}

/** QUIT lets commands already sent finish; a client that is not connected has none, and is just dropped. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit();
}
