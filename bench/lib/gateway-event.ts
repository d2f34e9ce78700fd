// The event the gateway benchmarks publish, shared by the bench and the Hearth child (which must not load
// the bench's client code).

/** A lobby message, as the SDK's social layer receives them. */
export const BENCH_EVENT_TYPE = 'LOBBY_MESSAGE_CREATE';

/** The event's data: a chat line in a game lobby, a typical small dispatch. */
export const BENCH_EVENT_DATA: Record<string, unknown> = {
  id: '1351234567890123456',
  lobby_id: '1351234567890120000',
  channel_id: '1351234567890120001',
  author_id: '1351234567890120002',
  content: 'gg! same lobby tomorrow at nine? I can host again, bring the new map',
  metadata: { team: 'blue', round: '7' },
  flags: 0,
  timestamp: '2025-06-01T21:04:05.123000+00:00',
};
