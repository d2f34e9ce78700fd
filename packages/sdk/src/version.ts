/**
 * This library's version, major.minor.build (seed: Versioning): the platform SDK release whose interface it
 * follows. It goes with every request and Identify, so the server can tell an SDK past its support window.
 */
export const SDK_VERSION = { major: 1, minor: 10, build: 0 } as const;

export const SDK_VERSION_STRING = `${SDK_VERSION.major}.${SDK_VERSION.minor}.${SDK_VERSION.build}`;
