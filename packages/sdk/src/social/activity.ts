import {
  ActivityFlags,
  ActivityLimits,
  type ActivityPlatform,
  MessageActivityTypes,
  ActivityTypes as WireActivityTypes,
} from '@hearth/protocol';

/** ActivityTypes of the library: what the player is doing (PROTOCOL.md §B.8). */
export const ActivityTypes = {
  Playing: WireActivityTypes.Playing,
  Streaming: WireActivityTypes.Streaming,
  Listening: WireActivityTypes.Listening,
  Watching: WireActivityTypes.Watching,
  CustomStatus: WireActivityTypes.Custom,
  Competing: WireActivityTypes.Competing,
  HangStatus: WireActivityTypes.HangStatus,
} as const;
export type ActivityTypes = (typeof ActivityTypes)[keyof typeof ActivityTypes];

/** ActivityPartyPrivacy: who may join the party without an invite. */
export const ActivityPartyPrivacy = { Private: 0, Public: 1 } as const;
export type ActivityPartyPrivacy = (typeof ActivityPartyPrivacy)[keyof typeof ActivityPartyPrivacy];

/** ActivityGamePlatforms: a bit per platform the game's invites can be accepted on. */
export const ActivityGamePlatforms = {
  Desktop: 1,
  Xbox: 2,
  Samsung: 4,
  IOS: 8,
  Android: 16,
  Embedded: 32,
  PS4: 64,
  PS5: 128,
  MetaQuest: 256,
} as const;

const PLATFORM_NAMES: ReadonlyArray<[number, ActivityPlatform]> = [
  [ActivityGamePlatforms.Desktop, 'desktop'],
  [ActivityGamePlatforms.Xbox, 'xbox'],
  [ActivityGamePlatforms.Samsung, 'samsung'],
  [ActivityGamePlatforms.IOS, 'ios'],
  [ActivityGamePlatforms.Android, 'android'],
  [ActivityGamePlatforms.Embedded, 'embedded'],
  [ActivityGamePlatforms.PS4, 'ps4'],
  [ActivityGamePlatforms.PS5, 'ps5'],
  [ActivityGamePlatforms.MetaQuest, 'meta_quest'],
];

/** ActivityActionTypes of an invite: an invitation to join, or a request to be invited. */
export const ActivityActionTypes = {
  Invalid: 0,
  Join: MessageActivityTypes.Join,
  JoinRequest: MessageActivityTypes.JoinRequest,
} as const;
export type ActivityActionTypes = (typeof ActivityActionTypes)[keyof typeof ActivityActionTypes];

/** The wire activity (PROTOCOL.md §B.8). */
export interface WireActivity {
  name: string;
  type: number;
  application_id?: string;
  created_at?: number;
  details?: string | null;
  details_url?: string | null;
  state?: string | null;
  state_url?: string | null;
  timestamps?: { start?: number; end?: number } | null;
  assets?: Record<string, string | null | undefined> | null;
  party?: { id?: string; size?: [number, number] } | null;
  secrets?: { join?: string } | null;
  flags?: number;
  supported_platforms?: string[];
}

export class ActivityAssets {
  #large?: string | undefined;
  #largeText?: string | undefined;
  #largeUrl?: string | undefined;
  #small?: string | undefined;
  #smallText?: string | undefined;
  #smallUrl?: string | undefined;
  #inviteCoverImage?: string | undefined;

  LargeImage(): string | undefined {
    return this.#large;
  }
  SetLargeImage(value: string | undefined): void {
    this.#large = value;
  }
  LargeText(): string | undefined {
    return this.#largeText;
  }
  SetLargeText(value: string | undefined): void {
    this.#largeText = value;
  }
  LargeUrl(): string | undefined {
    return this.#largeUrl;
  }
  SetLargeUrl(value: string | undefined): void {
    this.#largeUrl = value;
  }
  SmallImage(): string | undefined {
    return this.#small;
  }
  SetSmallImage(value: string | undefined): void {
    this.#small = value;
  }
  SmallText(): string | undefined {
    return this.#smallText;
  }
  SetSmallText(value: string | undefined): void {
    this.#smallText = value;
  }
  SmallUrl(): string | undefined {
    return this.#smallUrl;
  }
  SetSmallUrl(value: string | undefined): void {
    this.#smallUrl = value;
  }
  /** The image of invites to this activity: a URL or an asset key (seed: `assets.inviteCoverImage`). */
  InviteCoverImage(): string | undefined {
    return this.#inviteCoverImage;
  }
  SetInviteCoverImage(value: string | undefined): void {
    this.#inviteCoverImage = value;
  }
}

export class ActivityParty {
  #id = '';
  #current = 0;
  #max = 0;
  #privacy: ActivityPartyPrivacy = ActivityPartyPrivacy.Private;

  Id(): string {
    return this.#id;
  }
  SetId(value: string): void {
    this.#id = value;
  }
  CurrentSize(): number {
    return this.#current;
  }
  SetCurrentSize(value: number): void {
    this.#current = value;
  }
  MaxSize(): number {
    return this.#max;
  }
  SetMaxSize(value: number): void {
    this.#max = value;
  }
  Privacy(): ActivityPartyPrivacy {
    return this.#privacy;
  }
  SetPrivacy(value: ActivityPartyPrivacy): void {
    this.#privacy = value;
  }
}

export class ActivitySecrets {
  #join = '';
  Join(): string {
    return this.#join;
  }
  SetJoin(value: string): void {
    this.#join = value;
  }
}

/** Start and end, in seconds in the library (PROTOCOL.md §B.8: converted to ms on the wire). */
export class ActivityTimestamps {
  #start = 0;
  #end = 0;
  Start(): number {
    return this.#start;
  }
  SetStart(value: number): void {
    this.#start = value;
  }
  End(): number {
    return this.#end;
  }
  SetEnd(value: number): void {
    this.#end = value;
  }
}

/** Activity: the rich presence a game sets with UpdateRichPresence (PROTOCOL.md §B.8). */
export class Activity {
  #name = '';
  #type: ActivityTypes = ActivityTypes.Playing;
  #state?: string | undefined;
  #stateUrl?: string | undefined;
  #details?: string | undefined;
  #detailsUrl?: string | undefined;
  #applicationId?: bigint | undefined;
  #assets?: ActivityAssets | undefined;
  #party?: ActivityParty | undefined;
  #secrets?: ActivitySecrets | undefined;
  #timestamps?: ActivityTimestamps | undefined;
  #platforms: number = ActivityGamePlatforms.Desktop;

  Name(): string {
    return this.#name;
  }
  SetName(value: string): void {
    this.#name = value;
  }
  Type(): ActivityTypes {
    return this.#type;
  }
  SetType(value: ActivityTypes): void {
    this.#type = value;
  }
  State(): string | undefined {
    return this.#state;
  }
  SetState(value: string | undefined): void {
    this.#state = value;
  }
  StateUrl(): string | undefined {
    return this.#stateUrl;
  }
  SetStateUrl(value: string | undefined): void {
    this.#stateUrl = value;
  }
  Details(): string | undefined {
    return this.#details;
  }
  SetDetails(value: string | undefined): void {
    this.#details = value;
  }
  DetailsUrl(): string | undefined {
    return this.#detailsUrl;
  }
  SetDetailsUrl(value: string | undefined): void {
    this.#detailsUrl = value;
  }
  ApplicationId(): bigint | undefined {
    return this.#applicationId;
  }
  Assets(): ActivityAssets | undefined {
    return this.#assets;
  }
  SetAssets(value: ActivityAssets | undefined): void {
    this.#assets = value;
  }
  Party(): ActivityParty | undefined {
    return this.#party;
  }
  SetParty(value: ActivityParty | undefined): void {
    this.#party = value;
  }
  Secrets(): ActivitySecrets | undefined {
    return this.#secrets;
  }
  SetSecrets(value: ActivitySecrets | undefined): void {
    this.#secrets = value;
  }
  Timestamps(): ActivityTimestamps | undefined {
    return this.#timestamps;
  }
  SetTimestamps(value: ActivityTimestamps | undefined): void {
    this.#timestamps = value;
  }
  /** A mask of ActivityGamePlatforms; invites need at least one (PROTOCOL.md §B.9). */
  SupportedPlatforms(): number {
    return this.#platforms;
  }
  SetSupportedPlatforms(value: number): void {
    this.#platforms = value;
  }

  /** What is wrong with this activity for the server, or undefined (PROTOCOL.md §B.8 field limits). */
  Validate(): string | undefined {
    const tooLong = (value: string | undefined, max: number) => value !== undefined && value.length > max;
    if (this.#name.length < ActivityLimits.nameMin || this.#name.length > ActivityLimits.nameMax)
      return `Name must be ${ActivityLimits.nameMin} to ${ActivityLimits.nameMax} characters`;
    if (tooLong(this.#details, ActivityLimits.detailsMax))
      return `Details is longer than ${ActivityLimits.detailsMax}`;
    if (tooLong(this.#state, ActivityLimits.stateMax))
      return `State is longer than ${ActivityLimits.stateMax}`;
    for (const [name, url] of [
      ['StateUrl', this.#stateUrl],
      ['DetailsUrl', this.#detailsUrl],
      ['Assets.LargeUrl', this.#assets?.LargeUrl()],
      ['Assets.SmallUrl', this.#assets?.SmallUrl()],
    ] as const) {
      if (tooLong(url, ActivityLimits.urlMax)) return `${name} is longer than ${ActivityLimits.urlMax}`;
    }
    if (tooLong(this.#party?.Id(), ActivityLimits.partyIdMax))
      return `Party.Id is longer than ${ActivityLimits.partyIdMax}`;
    if (tooLong(this.#secrets?.Join(), ActivityLimits.secretMax))
      return `Secrets.Join is longer than ${ActivityLimits.secretMax}`;
    return undefined;
  }

  /**
   * The wire form: seconds become milliseconds, privacy and platforms become flags and names.
   * @internal
   */
  toWire(): WireActivity {
    const assets = this.#assets;
    const party = this.#party;
    const publicParty = party?.Privacy() === ActivityPartyPrivacy.Public;
    return {
      name: this.#name,
      type: this.#type,
      ...(this.#details !== undefined ? { details: this.#details } : {}),
      ...(this.#detailsUrl !== undefined ? { details_url: this.#detailsUrl } : {}),
      ...(this.#state !== undefined ? { state: this.#state } : {}),
      ...(this.#stateUrl !== undefined ? { state_url: this.#stateUrl } : {}),
      ...(this.#timestamps
        ? {
            timestamps: {
              ...(this.#timestamps.Start() ? { start: this.#timestamps.Start() * 1000 } : {}),
              ...(this.#timestamps.End() ? { end: this.#timestamps.End() * 1000 } : {}),
            },
          }
        : {}),
      ...(assets
        ? {
            assets: dropUndefined({
              large_image: assets.LargeImage(),
              large_text: assets.LargeText(),
              large_url: assets.LargeUrl(),
              small_image: assets.SmallImage(),
              small_text: assets.SmallText(),
              small_url: assets.SmallUrl(),
              invite_cover_image: assets.InviteCoverImage(),
            }),
          }
        : {}),
      ...(party ? { party: { id: party.Id(), size: [party.CurrentSize(), party.MaxSize()] } } : {}),
      ...(this.#secrets ? { secrets: { join: this.#secrets.Join() } } : {}),
      // A public party is open to friends without an invite: the PARTY_PRIVACY_FRIENDS flag (§B.8).
      ...(publicParty ? { flags: ActivityFlags.PartyPrivacyFriends } : {}),
      supported_platforms: PLATFORM_NAMES.filter(([bit]) => (this.#platforms & bit) !== 0).map(([, n]) => n),
    };
  }

  /** An activity as a friend's presence carried it. @internal */
  static fromWire(wire: WireActivity): Activity {
    const activity = new Activity();
    activity.#name = wire.name;
    activity.#type = wire.type as ActivityTypes;
    activity.#state = wire.state ?? undefined;
    activity.#stateUrl = wire.state_url ?? undefined;
    activity.#details = wire.details ?? undefined;
    activity.#detailsUrl = wire.details_url ?? undefined;
    activity.#applicationId = wire.application_id ? BigInt(wire.application_id) : undefined;
    if (wire.assets) {
      const assets = new ActivityAssets();
      assets.SetLargeImage(wire.assets['large_image'] ?? undefined);
      assets.SetLargeText(wire.assets['large_text'] ?? undefined);
      assets.SetLargeUrl(wire.assets['large_url'] ?? undefined);
      assets.SetSmallImage(wire.assets['small_image'] ?? undefined);
      assets.SetSmallText(wire.assets['small_text'] ?? undefined);
      assets.SetSmallUrl(wire.assets['small_url'] ?? undefined);
      assets.SetInviteCoverImage(wire.assets['invite_cover_image'] ?? undefined);
      activity.#assets = assets;
    }
    if (wire.party) {
      const party = new ActivityParty();
      party.SetId(wire.party.id ?? '');
      party.SetCurrentSize(wire.party.size?.[0] ?? 0);
      party.SetMaxSize(wire.party.size?.[1] ?? 0);
      party.SetPrivacy(
        ((wire.flags ?? 0) & ActivityFlags.PartyPrivacyFriends) !== 0
          ? ActivityPartyPrivacy.Public
          : ActivityPartyPrivacy.Private,
      );
      activity.#party = party;
    }
    if (wire.timestamps) {
      const timestamps = new ActivityTimestamps();
      timestamps.SetStart(Math.floor((wire.timestamps.start ?? 0) / 1000));
      timestamps.SetEnd(Math.floor((wire.timestamps.end ?? 0) / 1000));
      activity.#timestamps = timestamps;
    }
    activity.#platforms = PLATFORM_NAMES.filter(([, n]) => wire.supported_platforms?.includes(n)).reduce(
      (all, [bit]) => all | bit,
      0,
    );
    return activity;
  }
}

function dropUndefined(record: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
}

/** The wire message an invite arrives as (PROTOCOL.md §B.9). */
export interface WireInviteMessage {
  id: string;
  channel_id: string;
  author: { id: string };
  application_id: string;
  activity: { type: number; party_id?: string };
}

/** ActivityInvite: an invite or a join request, as SetActivityInviteCreatedCallback receives it. */
export class ActivityInvite {
  readonly #message: WireInviteMessage;
  #valid = true;

  /** Made by the library from the invite message the platform sent. @internal */
  constructor(message: WireInviteMessage) {
    this.#message = message;
  }

  SenderId(): bigint {
    return BigInt(this.#message.author.id);
  }
  ChannelId(): bigint {
    return BigInt(this.#message.channel_id);
  }
  MessageId(): bigint {
    return BigInt(this.#message.id);
  }
  Type(): ActivityActionTypes {
    return this.#message.activity.type === MessageActivityTypes.JoinRequest
      ? ActivityActionTypes.JoinRequest
      : ActivityActionTypes.Join;
  }
  /** The game the invite is for: a sibling application's invites carry that application's id (seed). */
  ApplicationId(): bigint {
    return BigInt(this.#message.application_id);
  }
  PartyId(): string {
    return this.#message.activity.party_id ?? '';
  }
  IsValid(): boolean {
    return this.#valid;
  }
  /** @internal the library marks an invite accepted (here or on another device) as no longer open. */
  invalidate(): void {
    this.#valid = false;
  }
}
