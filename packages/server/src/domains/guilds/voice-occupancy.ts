import type { BusEvent } from '../../bus/bus.js';
import type { Executor } from '../../storage/database.js';
import * as voiceStore from './voice-states-store.js';

/**
 * Told inside the transaction whenever people join, move between or leave a guild's voice channels; answers
 * the events to publish after commit. The voice-status domain implements it (voice start time, PROTOCOL.md
 * §D.7); declared here so that the guild domain never imports the domain it tells (STYLE.md rule 16).
 */
export interface VoiceChannelOccupancy {
  /** `occupants` counts who is in a channel now; the callee may lock the channel before it asks. */
  occupancyChanged(
    tx: Executor,
    guildId: string,
    channelIds: readonly string[],
    occupants: (channelId: string) => Promise<number>,
  ): Promise<BusEvent[]>;
}

/** The events `occupancy` answers for the channels someone entered or left (nulls and repeats skipped). */
export async function voiceChannelsChanged(
  tx: Executor,
  occupancy: VoiceChannelOccupancy | undefined,
  guildId: string,
  channelIds: ReadonlyArray<string | null | undefined>,
): Promise<BusEvent[]> {
  const ids = [...new Set(channelIds.filter((id): id is string => typeof id === 'string'))];
  if (!occupancy || ids.length === 0) return [];
  return occupancy.occupancyChanged(tx, guildId, ids, (channelId) =>
    voiceStore.countInChannel(tx, channelId),
  );
}
