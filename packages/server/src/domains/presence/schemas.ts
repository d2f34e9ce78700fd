import {
  ACTIVITY_PLATFORMS,
  ActivityLimits,
  ActivityTypes,
  ALL_ACTIVITY_FLAGS,
  PresenceStatuses,
  StatusDisplayTypes,
} from '@hearth/protocol';
import { type Static, Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const Text = (max: number) => Nullable(Type.String({ maxLength: max }));
const Url = Text(ActivityLimits.urlMax);
const Milliseconds = Type.Integer({ minimum: 0 });

/** An activity as a client sets it (PROTOCOL.md §B.8), with the field limits of the UDOC send side. */
export const ActivityInput = Type.Object({
  name: Type.String({ minLength: ActivityLimits.nameMin, maxLength: ActivityLimits.nameMax }),
  type: Type.Union([
    Type.Literal(ActivityTypes.Playing),
    Type.Literal(ActivityTypes.Streaming),
    Type.Literal(ActivityTypes.Listening),
    Type.Literal(ActivityTypes.Watching),
    Type.Literal(ActivityTypes.Custom),
    Type.Literal(ActivityTypes.Competing),
    Type.Literal(ActivityTypes.HangStatus),
  ]),
  url: Type.Optional(Url),
  created_at: Type.Optional(Milliseconds),
  timestamps: Type.Optional(
    Nullable(Type.Object({ start: Type.Optional(Milliseconds), end: Type.Optional(Milliseconds) })),
  ),
  application_id: Type.Optional(Snowflake),
  status_display_type: Type.Optional(
    Nullable(
      Type.Union([
        Type.Literal(StatusDisplayTypes.Name),
        Type.Literal(StatusDisplayTypes.State),
        Type.Literal(StatusDisplayTypes.Details),
      ]),
    ),
  ),
  details: Type.Optional(Text(ActivityLimits.detailsMax)),
  details_url: Type.Optional(Url),
  state: Type.Optional(Text(ActivityLimits.stateMax)),
  state_url: Type.Optional(Url),
  emoji: Type.Optional(
    Nullable(
      Type.Object({
        name: Type.String({ maxLength: 32 }),
        id: Type.Optional(Nullable(Snowflake)),
        animated: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  party: Type.Optional(
    Nullable(
      Type.Object({
        id: Type.Optional(Type.String({ maxLength: ActivityLimits.partyIdMax })),
        size: Type.Optional(Type.Tuple([Type.Integer({ minimum: 0 }), Type.Integer({ minimum: 0 })])),
      }),
    ),
  ),
  assets: Type.Optional(
    Nullable(
      Type.Object({
        large_image: Type.Optional(Text(ActivityLimits.assetImageMax)),
        large_text: Type.Optional(Text(ActivityLimits.assetTextMax)),
        large_url: Type.Optional(Url),
        small_image: Type.Optional(Text(ActivityLimits.assetImageMax)),
        small_text: Type.Optional(Text(ActivityLimits.assetTextMax)),
        small_url: Type.Optional(Url),
        invite_cover_image: Type.Optional(Text(ActivityLimits.assetImageMax)),
      }),
    ),
  ),
  secrets: Type.Optional(
    Nullable(
      Type.Object({
        join: Type.Optional(Type.String({ maxLength: ActivityLimits.secretMax })),
        spectate: Type.Optional(Type.String({ maxLength: ActivityLimits.secretMax })),
        match: Type.Optional(Type.String({ maxLength: ActivityLimits.secretMax })),
      }),
    ),
  ),
  instance: Type.Optional(Type.Boolean()),
  flags: Type.Optional(Type.Integer({ minimum: 0, maximum: ALL_ACTIVITY_FLAGS })),
  buttons: Type.Optional(
    Type.Array(
      Type.Object({
        label: Type.String({ minLength: 1, maxLength: ActivityLimits.buttonLabelMax }),
        url: Type.String({ minLength: 1, maxLength: ActivityLimits.buttonUrlMax }),
      }),
      { maxItems: ActivityLimits.buttonsMax },
    ),
  ),
  supported_platforms: Type.Optional(
    Type.Array(Type.Union(ACTIVITY_PLATFORMS.map((value) => Type.Literal(value))), {
      maxItems: ActivityLimits.supportedPlatformsMax,
    }),
  ),
  platform: Type.Optional(Text(32)),
  session_id: Type.Optional(Text(64)),
  parent_application_id: Type.Optional(Nullable(Snowflake)),
  metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String({ maxLength: 1024 })))),
});
export type ActivityInput = Static<typeof ActivityInput>;

/** The `d` of gateway op 3 and of Identify's `presence` (PROTOCOL.md §D.2). */
export const PresenceInput = Type.Object({
  status: Type.Union([
    Type.Literal(PresenceStatuses.Online),
    Type.Literal(PresenceStatuses.Idle),
    Type.Literal(PresenceStatuses.Dnd),
    Type.Literal(PresenceStatuses.Invisible),
    Type.Literal(PresenceStatuses.Offline),
  ]),
  activities: Type.Array(ActivityInput, { maxItems: ActivityLimits.activitiesMax }),
  since: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  afk: Type.Optional(Type.Boolean()),
});
export type PresenceInput = Static<typeof PresenceInput>;
