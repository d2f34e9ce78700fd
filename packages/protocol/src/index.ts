export * from './errors.js';
export * from './gateway.js';
export * from './http.js';
export * from './limits.js';
export * from './scopes.js';
export * from './snowflake.js';
export * from './timeline.js';
