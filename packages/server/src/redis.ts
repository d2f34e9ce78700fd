import { Redis } from 'ioredis';

/** A Redis connection whose keys all carry `prefix`, failing fast instead of queueing while it is down. */
export async function connectRedis(url: string, prefix: string): Promise<Redis> {
  const redis = new Redis(url, {
    keyPrefix: prefix,
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
  });
  await redis.connect();
  return redis;
}
