import type { APIMessage } from 'discord-api-types/v10';
import type { ApiInit, TestHearth } from '../../../../test-support/hearth.js';
import { call } from '../channel-messages/support.js';

/** The 200 body of Search Guild Messages. */
export interface SearchBody {
  doing_deep_historical_index: boolean;
  total_results: number;
  messages: Array<Array<APIMessage & { hit: boolean }>>;
}

/** A query string from pairs; a list value repeats its key (`?id=1&id=2`), as the platform reads arrays. */
export function queryOf(query: Record<string, string | number | boolean | readonly string[]>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** GET /guilds/{id}/messages/search as `auth`; status and body. */
export function searchGuild<T = SearchBody>(
  hearth: TestHearth,
  guildId: string,
  auth: string,
  query: Parameters<typeof queryOf>[0] = {},
  init: ApiInit = {},
) {
  return call<T>(hearth, `/guilds/${guildId}/messages/search${queryOf(query)}`, { ...init, auth });
}

/** The ids of a search's result messages, in order. */
export function idsOf(body: SearchBody): string[] {
  return body.messages.map(([message]) => message!.id);
}
