/** StatusType of the library: a user's online status as the player sees it. */
export const StatusType = {
  Online: 0,
  Offline: 1,
  Blocked: 2,
  Idle: 3,
  Dnd: 4,
  Invisible: 5,
  Streaming: 6,
  Unknown: 7,
} as const;
export type StatusType = (typeof StatusType)[keyof typeof StatusType];
