import { InteractionLimits } from '@hearth/protocol';
import { Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });

/**
 * The platform client's own `POST /interactions` (not in the public reference): how a user runs a command,
 * uses a component or submits a modal. `data` is checked per type by the service.
 */
export const InvokeInteraction = Type.Object({
  type: Type.Integer(),
  application_id: Snowflake,
  channel_id: Snowflake,
  guild_id: Type.Optional(Type.Union([Snowflake, Type.Null()])),
  /** The message a component is on. */
  message_id: Type.Optional(Snowflake),
  /** The gateway session the client uses; the outcome goes to all the user's sessions. */
  session_id: Type.Optional(Type.String({ maxLength: 128 })),
  nonce: Type.Optional(Type.String({ maxLength: 64 })),
  data: Type.Record(Type.String(), Type.Unknown()),
});

export const CommandData = Type.Object({
  id: Snowflake,
  name: Type.String({ minLength: 1, maxLength: 32 }),
  type: Type.Integer(),
  version: Type.Optional(Type.String()),
  options: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 25 })),
  target_id: Type.Optional(Snowflake),
  guild_id: Type.Optional(Snowflake),
});

export const ComponentData = Type.Object({
  custom_id: Type.String({ minLength: 1, maxLength: InteractionLimits.customIdMax }),
  component_type: Type.Integer(),
  values: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 25 })),
});

export const ModalSubmitData = Type.Object({
  /** The modal's id, as INTERACTION_MODAL_CREATE told it. */
  id: Snowflake,
  custom_id: Type.String({ minLength: 1, maxLength: InteractionLimits.customIdMax }),
  components: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
    maxItems: InteractionLimits.modalComponentsMax,
  }),
});

/** The interaction response (DOCS Interaction Response Structure); `data` is checked per callback type. */
export const InteractionResponse = Type.Object({
  type: Type.Integer(),
  data: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
});

export const AutocompleteData = Type.Object({
  choices: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 100 }),
      name_localizations: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
      value: Type.Union([Type.String({ maxLength: 100 }), Type.Number()]),
    }),
    { maxItems: InteractionLimits.autocompleteChoicesMax },
  ),
});

export const ModalData = Type.Object({
  custom_id: Type.String({ minLength: 1, maxLength: InteractionLimits.customIdMax }),
  title: Type.String({ minLength: 1, maxLength: InteractionLimits.modalTitleMax }),
  components: Type.Array(Type.Unknown(), {
    minItems: InteractionLimits.modalComponentsMin,
    maxItems: InteractionLimits.modalComponentsMax,
  }),
});

export const CallbackParams = Type.Object({ interaction_id: Snowflake, interaction_token: Type.String() });
export const CallbackQuery = Type.Object({ with_response: Type.Optional(Type.Boolean()) });
export const WebhookParams = Type.Object({ application_id: Snowflake, interaction_token: Type.String() });
export const WebhookMessageParams = Type.Object({
  application_id: Snowflake,
  interaction_token: Type.String(),
  message_id: Type.Union([Snowflake, Type.Literal('@original')]),
});
