import { type Static, type TSchema, Type } from 'typebox';
import { HearthError } from '../kernel/errors.js';
import { parse } from '../kernel/validation.js';

/**
 * Scripted test users (README "Scripted test users"): a test acts as a user through the same service call
 * that user's own request makes, so a bot under test sees exactly what it would see. Each action is one
 * entry of a registry; features register theirs where they are composed (slash commands, component clicks
 * and modal submits join once interactions exist).
 */
export interface ScriptedAction<S extends TSchema = TSchema> {
  /** The path segment: `POST /_hearth/act/{name}`, `hearth emulator act {name}`. */
  name: string;
  description: string;
  /** The body; every action's has `user_id`, the user acted as. */
  body: S;
  run(input: Static<S>): Promise<unknown>;
}

export class ScriptedActions {
  readonly #actions = new Map<string, ScriptedAction>();

  register<S extends TSchema>(action: ScriptedAction<S>): void {
    if (this.#actions.has(action.name)) throw new Error(`scripted action ${action.name} registered twice`);
    this.#actions.set(action.name, action as unknown as ScriptedAction);
  }

  list(): { name: string; description: string }[] {
    return [...this.#actions.values()].map(({ name, description }) => ({ name, description }));
  }

  /** Runs one action with its body validated (50035 naming the field); an unknown name: 404. */
  async run(name: string, input: unknown): Promise<unknown> {
    const action = this.#actions.get(name);
    if (!action) throw new HearthError('GeneralNotFound');
    return (await action.run(parse(action.body, input ?? {}))) ?? null;
  }
}

/** What the built-in actions call: the services a user's own requests reach. */
export interface UserServices {
  createMessage(actor: { userId: string; bot: boolean }, channelId: string, body: unknown): Promise<unknown>;
  addReaction(
    actor: { userId: string; bot: boolean },
    channelId: string,
    messageId: string,
    emoji: string,
  ): Promise<void>;
  /** Gateway op 4 as the user's session would send it. */
  updateVoiceState(userId: string, sessionId: string, payload: unknown): Promise<unknown>;
  acceptInvite(userId: string, code: string): Promise<unknown>;
  befriend(userId: string, targetId: string): Promise<void>;
  /** Gateway op 3 as the user's session would send it (`started` the first time). */
  setPresence(
    session: { id: string; userId: string; applicationId: undefined },
    input: unknown,
  ): Promise<void>;
}

const Snowflake = Type.String({ format: 'snowflake' });

/** The gateway session id a scripted user's voice state and presence hang on. */
export const scriptedSessionId = (userId: string) => `emulator-${userId}`;

/** Registers the user actions the platform's own services provide. */
export function registerUserActions(actions: ScriptedActions, services: UserServices): void {
  actions.register({
    name: 'send_message',
    description: 'The user sends a message (the body of Create Message besides user_id and channel_id).',
    body: Type.Object({ user_id: Snowflake, channel_id: Snowflake }, { additionalProperties: true }),
    run: ({ user_id, channel_id, ...message }) =>
      services.createMessage({ userId: user_id, bot: false }, channel_id, message),
  });
  actions.register({
    name: 'add_reaction',
    description: 'The user reacts to a message with an emoji (`👍` or `name:id`).',
    body: Type.Object(
      {
        user_id: Snowflake,
        channel_id: Snowflake,
        message_id: Snowflake,
        emoji: Type.String({ minLength: 1, maxLength: 100 }),
      },
      { additionalProperties: false },
    ),
    run: async ({ user_id, channel_id, message_id, emoji }) => {
      await services.addReaction({ userId: user_id, bot: false }, channel_id, message_id, emoji);
    },
  });
  actions.register({
    name: 'join_voice',
    description: 'The user joins (or with channel_id null leaves) a guild voice channel, as op 4 does.',
    body: Type.Object(
      {
        user_id: Snowflake,
        guild_id: Snowflake,
        channel_id: Type.Union([Snowflake, Type.Null()]),
        self_mute: Type.Optional(Type.Boolean()),
        self_deaf: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    run: ({ user_id, guild_id, channel_id, self_mute, self_deaf }) =>
      services.updateVoiceState(user_id, scriptedSessionId(user_id), {
        guild_id,
        channel_id,
        self_mute: self_mute ?? false,
        self_deaf: self_deaf ?? false,
      }),
  });
  actions.register({
    name: 'accept_invite',
    description: 'The user accepts a guild invite by its code.',
    body: Type.Object(
      { user_id: Snowflake, code: Type.String({ minLength: 1, maxLength: 100 }) },
      { additionalProperties: false },
    ),
    run: ({ user_id, code }) => services.acceptInvite(user_id, code),
  });
  actions.register({
    name: 'send_friend_request',
    description: 'The user sends a friend request to target_id (or accepts the one target_id sent).',
    body: Type.Object({ user_id: Snowflake, target_id: Snowflake }, { additionalProperties: false }),
    run: ({ user_id, target_id }) => services.befriend(user_id, target_id),
  });
  actions.register({
    name: 'set_presence',
    description: 'The user sets a presence (status and activities), as op 3 does.',
    body: Type.Object(
      {
        user_id: Snowflake,
        status: Type.String(),
        activities: Type.Optional(Type.Array(Type.Unknown())),
      },
      { additionalProperties: false },
    ),
    run: ({ user_id, status, activities }) =>
      services.setPresence(
        { id: scriptedSessionId(user_id), userId: user_id, applicationId: undefined },
        { status, activities: activities ?? [] },
      ),
  });
}

/** What the interaction actions call: the platform client's POST /interactions and what it reads first. */
export interface InteractionServices {
  /** POST /interactions as the user's client sends it; answers the interaction's id. */
  invoke(userId: string, body: unknown): Promise<string>;
  /** The command the user may run in the channel by that name and type, as the client's command index has it. */
  findCommand(
    userId: string,
    applicationId: string,
    channelId: string,
    name: string,
    type: number,
  ): Promise<{ id: string; version: string } | undefined>;
  /** The open modal the client would have learnt of from INTERACTION_MODAL_CREATE. */
  openModal(userId: string, applicationId: string, customId: string): Promise<string | undefined>;
  /** The choices the client would have learnt of from APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE. */
  offeredChoices(userId: string, interactionId: string): Promise<unknown[] | null>;
}

const InteractionTarget = {
  user_id: Snowflake,
  application_id: Snowflake,
  channel_id: Snowflake,
};

/**
 * Registers running a command, typing into an autocomplete option, clicking a component and submitting a
 * modal: POST /interactions as a user.
 */
export function registerInteractionActions(actions: ScriptedActions, services: InteractionServices): void {
  // Each answers the interaction's id, as the client learns it from INTERACTION_CREATE.
  const invoke = async (userId: string, body: Record<string, unknown>) => ({
    interaction_id: await services.invoke(userId, { session_id: scriptedSessionId(userId), ...body }),
  });
  actions.register({
    name: 'run_slash_command',
    description:
      'The user runs an application command by name (type 1 chat input by default; 2 user and 3 message take target_id).',
    body: Type.Object({
      ...InteractionTarget,
      name: Type.String({ minLength: 1, maxLength: 32 }),
      type: Type.Optional(Type.Integer({ minimum: 1, maximum: 3 })),
      options: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 25 })),
      target_id: Type.Optional(Snowflake),
    }),
    run: async ({ user_id, application_id, channel_id, name, type = 1, options, target_id }) => {
      const command = await services.findCommand(user_id, application_id, channel_id, name, type);
      if (!command) throw new HearthError('UnknownApplicationCommand');
      return invoke(user_id, {
        type: 2,
        application_id,
        channel_id,
        data: {
          id: command.id,
          name,
          type,
          version: command.version,
          ...(options ? { options } : {}),
          ...(target_id ? { target_id } : {}),
        },
      });
    },
  });
  actions.register({
    name: 'autocomplete',
    description:
      'The user types into a chat input command option with autocomplete: options name the focused one. Answers the interaction id.',
    body: Type.Object({
      ...InteractionTarget,
      name: Type.String({ minLength: 1, maxLength: 32 }),
      options: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 25 }),
    }),
    run: async ({ user_id, application_id, channel_id, name, options }) => {
      const command = await services.findCommand(user_id, application_id, channel_id, name, 1);
      if (!command) throw new HearthError('UnknownApplicationCommand');
      return invoke(user_id, {
        type: 4,
        application_id,
        channel_id,
        data: { id: command.id, name, type: 1, version: command.version, options },
      });
    },
  });
  actions.register({
    name: 'autocomplete_choices',
    description:
      'The choices the application answered the user’s autocomplete with (null until it has), as the client sees them.',
    body: Type.Object({ user_id: Snowflake, interaction_id: Snowflake }),
    run: async ({ user_id, interaction_id }) => ({
      choices: await services.offeredChoices(user_id, interaction_id),
    }),
  });
  actions.register({
    name: 'click_component',
    description: 'The user clicks a button or picks select values on a message the application sent.',
    body: Type.Object({
      ...InteractionTarget,
      message_id: Snowflake,
      custom_id: Type.String({ minLength: 1, maxLength: 100 }),
      component_type: Type.Optional(Type.Integer({ minimum: 2, maximum: 8 })),
      values: Type.Optional(Type.Array(Type.String(), { maxItems: 25 })),
    }),
    run: ({ user_id, application_id, channel_id, message_id, custom_id, component_type = 2, values }) =>
      invoke(user_id, {
        type: 3,
        application_id,
        channel_id,
        message_id,
        data: { custom_id, component_type, ...(values ? { values } : {}) },
      }),
  });
  actions.register({
    name: 'submit_modal',
    description:
      'The user submits the modal the application showed them under custom_id, with these components.',
    body: Type.Object({
      ...InteractionTarget,
      custom_id: Type.String({ minLength: 1, maxLength: 100 }),
      components: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 5 }),
    }),
    run: async ({ user_id, application_id, channel_id, custom_id, components }) => {
      const modalId = await services.openModal(user_id, application_id, custom_id);
      if (modalId === undefined) throw new HearthError('UnknownInteraction');
      return invoke(user_id, {
        type: 5,
        application_id,
        channel_id,
        data: { id: modalId, custom_id, components },
      });
    },
  });
}
