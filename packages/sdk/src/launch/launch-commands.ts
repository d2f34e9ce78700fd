import type { LaunchRegistration } from '@hearth/protocol';

/**
 * Where RegisterLaunchCommand keeps its registrations: the machine's registry of the local agent (Node), or
 * none (browsers, which cannot start programs). Returns the reason when the registration is refused.
 */
export interface LaunchCommandStore {
  register(registration: LaunchRegistration): string | undefined;
}

/** A join the platform client launched this game for: the secret of the accepted invite. */
export interface LaunchJoin {
  applicationId: string;
  secret: string;
}
