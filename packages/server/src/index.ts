export { createHearth, type Hearth, type HearthOptions, type Services } from './app.js';
export { type Bus, MemoryBus } from './bus/bus.js';
export { type Config, ConfigError, loadConfig, SETTINGS, testConfig } from './config.js';
export type { AccountLinkParticipant } from './domains/accounts/link.js';
export { MemorySessionStore, type SessionStore } from './gateway/session-store.js';
export type { ObservedResponse, ResponseObserver } from './http/server.js';
export { type Clock, ManualClock, startingAt, systemClock } from './kernel/clock.js';
export { HearthError } from './kernel/errors.js';
export { addressProblem, type OutboundPolicy, outboundUrlProblem } from './kernel/outbound.js';
