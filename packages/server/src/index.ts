export type { RegisteredRoute } from './app.js';
export { createHearth, type Hearth, type HearthOptions, type Services } from './app.js';
export { type Bus, MemoryBus } from './bus/bus.js';
export { type Config, ConfigError, loadConfig, SETTINGS, testConfig } from './config.js';
export type { AccountLinkParticipant } from './domains/accounts/link.js';
export type { Emulator } from './emulator/emulator.js';
export type { SeedResult } from './emulator/seed.js';
export { MemorySessionStore, type SessionStore } from './gateway/session-store.js';
export type { RouteAuth } from './http/auth.js';
export type { ObservedResponse, ResponseObserver } from './http/server.js';
export { type Clock, ManualClock, startingAt, systemClock } from './kernel/clock.js';
export { HearthError } from './kernel/errors.js';
export {
  addressProblem,
  type OutboundPolicy,
  outboundRequest,
  outboundUrlProblem,
} from './kernel/outbound.js';
