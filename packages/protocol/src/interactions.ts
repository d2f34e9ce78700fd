/**
 * Interactions (DOCS interactions/receiving-and-responding; seed: Records "Interaction", Limits, Versioning).
 * Command types and context types are the commands domain's (commands.ts); these are the interaction's own.
 */

/** Interaction `type`. */
export const InteractionTypes = {
  Ping: 1,
  ApplicationCommand: 2,
  MessageComponent: 3,
  ApplicationCommandAutocomplete: 4,
  ModalSubmit: 5,
} as const;
export type InteractionType = (typeof InteractionTypes)[keyof typeof InteractionTypes];

/** Interaction response (`POST …/callback`) `type`; 2 and 3 were removed long ago, 11 was never public. */
export const InteractionCallbackTypes = {
  Pong: 1,
  ChannelMessageWithSource: 4,
  DeferredChannelMessageWithSource: 5,
  DeferredUpdateMessage: 6,
  UpdateMessage: 7,
  ApplicationCommandAutocompleteResult: 8,
  Modal: 9,
  /** Deprecated on 17 June 2024 in favour of premium buttons; "will continue to function" (change log). */
  PremiumRequired: 10,
  LaunchActivity: 12,
} as const;
export type InteractionCallbackType =
  (typeof InteractionCallbackTypes)[keyof typeof InteractionCallbackTypes];

/** Keys of `authorizing_integration_owners` (application integration types), as the JSON keys they are. */
export const InteractionIntegrationTypes = { GuildInstall: 0, UserInstall: 1 } as const;

/** Numbers of the interaction rules (DOCS receiving-and-responding; seed: Limits). */
export const InteractionLimits = {
  /** The first response must come within 3 s of the interaction, else the token is invalidated. */
  initialResponseMs: 3_000,
  /** The token serves the webhook routes (original response, follow-ups) for 15 minutes. */
  tokenLifetimeMs: 15 * 60 * 1000,
  /** Follow-ups of an interaction whose app is only user-installed there (seed: Limits). */
  userInstallFollowupsMax: 5,
  autocompleteChoicesMax: 25,
  modalTitleMax: 45,
  modalComponentsMin: 1,
  modalComponentsMax: 5,
  customIdMax: 100,
  textInputValueMax: 4000,
  textInputLabelMax: 45,
  labelMax: 45,
  labelDescriptionMax: 100,
  /** File upload component `min_values`/`max_values` range (seed: Limits). */
  fileUploadValuesMin: 0,
  fileUploadValuesMax: 10,
  /** Options nested in a chat input command's data (subcommand group → subcommand → options). */
  optionDepthMax: 3,
} as const;

/** Text input `style`. */
export const TextInputStyles = { Short: 1, Paragraph: 2 } as const;

/**
 * Gateway dispatches of interactions. INTERACTION_CREATE is public (to the app's bot); the other three go
 * to the invoking user's own sessions and are not in the public documentation: their names follow what
 * the platform's client receives, their payloads are Hearth's reading of them (`{id, nonce}` and the modal).
 */
export const InteractionDispatches = {
  InteractionCreate: 'INTERACTION_CREATE',
  InteractionSuccess: 'INTERACTION_SUCCESS',
  InteractionFailure: 'INTERACTION_FAILURE',
  InteractionModalCreate: 'INTERACTION_MODAL_CREATE',
  /** The choices an app answered an autocomplete with, to the user typing (the platform client's event). */
  ApplicationCommandAutocompleteResponse: 'APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE',
} as const;
