import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ApplicationCommandTypes,
  ApplicationFlags,
  ComponentTypes,
  FormErrors,
  InteractionCallbackTypes,
  InteractionDispatches,
  InteractionIntegrationTypes,
  InteractionLimits,
  InteractionTypes,
  isInEffect,
  MessageFlags,
  MessageTypes,
} from '@hearth/protocol';
import type { Bus } from '../../bus/bus.js';
import type { UploadedFile } from '../../http/multipart.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { type OutboundPolicy, outboundUrlProblem } from '../../kernel/outbound.js';
import { hashToken } from '../../kernel/secrets.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import type { Application } from '../applications/service.js';
import type { AttachmentPlan, Attachments } from '../channel-messages/attachments.js';
import type { MessageObject } from '../channel-messages/objects.js';
import { type Actor, type Place, placeOf } from '../channel-messages/places.js';
import type { ChannelMessagesService } from '../channel-messages/service.js';
import type { GuildAccess } from '../guilds/access.js';
import type { Signer } from '../webhooks/delivery.js';
import { type CommandsPort, type CommandView, requireUsable } from './commands.js';
import { ENDPOINT_URL_RULES, pingBody, postInteraction, verifyEndpoint } from './endpoint.js';
import { checkSubmission, parseModalComponents } from './modals.js';
import { type InteractionScene, invokerOf, sceneOf, toInteractionObject } from './objects.js';
import { resolveOptions } from './resolved.js';
import {
  AutocompleteData,
  CommandData,
  ComponentData,
  InteractionResponse,
  InvokeInteraction,
  ModalData,
  ModalSubmitData,
} from './schemas.js';
import * as store from './store.js';

type Json = Record<string, unknown>;

export interface InteractionsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  logger: Logger;
  access: GuildAccess;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  applications: {
    getApplication(id: string): Promise<Application | undefined>;
    eventSigner(id: string): Promise<Signer | undefined>;
  };
  messages: ChannelMessagesService;
  /** Whether the user installed the app to their account. */
  userInstalled(db: Executor, applicationId: string, userId: string): Promise<boolean>;
  commands: CommandsPort;
  outbound: OutboundPolicy;
  /** The attachment size limit now (`attachment_size_limit`; 10 MiB from 16 January 2025, seed). */
  attachmentSizeLimit(): number;
  /** Where the files users send with interactions are stored, as message attachments are. */
  attachments: Pick<Attachments, 'plan' | 'plannedObjects' | 'saveForInteraction' | 'settle'>;
}

/** The files of a user's interaction request: planned before its transaction, by `files[n]` index. */
interface InteractionFiles {
  byIndex: Map<number, Json>;
  plan: (used: ReadonlySet<number>) => AttachmentPlan | undefined;
}

/** A token: the interaction's id, then random bytes (the id makes each one unique). */
function newToken(id: string): string {
  return `aW50ZXJhY3Rpb246${Buffer.from(id).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
}

/**
 * Interactions (DOCS receiving-and-responding): a user invokes (command, component, modal submit), the app
 * hears it on its endpoint or its gateway, answers once within 3 s, then uses the token for 15 minutes.
 */
export class InteractionsService {
  readonly #deps: InteractionsDeps;
  /** Deliveries to endpoints in flight: closing waits for them. */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(deps: InteractionsDeps) {
    this.#deps = deps;
  }

  // ---- The user's side (POST /interactions) ----

  /**
   * The id of the newest open modal `applicationId` showed `userId` under `customId`: what the platform
   * client reads from INTERACTION_MODAL_CREATE before it submits (scripted users have no gateway session).
   */
  async openModal(userId: string, applicationId: string, customId: string): Promise<string | undefined> {
    return (await store.findOpenModal(this.#deps.storage.db, userId, applicationId, customId))?.id;
  }

  /** A user's interaction: checked, stored, then delivered to the app; the user hears of it on the gateway. */
  async invoke(userId: string, input: unknown, uploads: readonly UploadedFile[] = []): Promise<string> {
    const body = parse(InvokeInteraction, input ?? {});
    const { storage, clock, snowflakes } = this.#deps;
    const application = await this.#deps.applications.getApplication(body.application_id);
    if (!application) throw new HearthError('UnknownApplication');
    const actor: Actor = { userId, bot: false };
    // The commands domain reads through its own connection: asked before the transaction, checked inside it.
    const command = isCommand(body.type)
      ? await this.#deps.commands.getCommand(application.id, parseData(CommandData, body.data).id)
      : undefined;
    const files = this.#filesOf(body.channel_id, uploads);
    const prepared = await storage.transaction(async (tx) => {
      const user = await this.#deps.users.getUserIn(tx, userId);
      if (!user) throw new HearthError('UnknownUser');
      const place = await placeOf(tx, this.#deps.access, actor, body.channel_id);
      if (body.guild_id !== undefined && body.guild_id !== null && body.guild_id !== place.guildId)
        throw invalidForm('guild_id', FormErrors.invalid());
      const scene = await sceneOf(tx, this.#deps, place, application, userId);
      const id = snowflakes.next();
      const token = newToken(id);
      const used = new Set<number>();
      const step = await this.#dataOf(tx, body, scene, application, user, files, used, command);
      const owners = step.integrationTypes
        ? Object.fromEntries(
            Object.entries(scene.owners).filter(([key]) => step.integrationTypes!.includes(Number(key))),
          )
        : scene.owners;
      if (Object.keys(owners).length === 0) throw new HearthError('MissingAccess');
      const finalScene: InteractionScene = { ...scene, owners };
      const payload = toInteractionObject({
        id,
        applicationId: application.id,
        type: body.type,
        data: step.data,
        scene: finalScene,
        invoker: await invokerOf(tx, finalScene, user),
        token,
        message: step.message,
        locale: 'en-US',
        attachmentSizeLimit: this.#deps.attachmentSizeLimit(),
      });
      const { token: _token, ...stored } = payload;
      await store.insertInteraction(tx, {
        id,
        application_id: application.id,
        type: body.type,
        token_hash: hashToken(token),
        user_id: userId,
        guild_id: place.guildId,
        channel_id: place.channelId,
        payload: JSON.stringify({ ...stored, place: placeJson(place), meta: step.meta }),
        source_message_id: step.sourceMessageId ?? null,
        nonce: body.nonce ?? null,
        user_install_only:
          Object.keys(owners).length === 1 && owners[String(InteractionIntegrationTypes.UserInstall)] ? 1 : 0,
        created_at: clock.now(),
      });
      const plan = files.plan(used);
      if (plan) await this.#deps.attachments.saveForInteraction(tx, id, plan);
      return { id, payload, scene: finalScene, plan };
    });
    if (prepared.plan) await this.#deps.attachments.settle(prepared.plan);
    await this.#tellUser(InteractionDispatches.InteractionCreate, userId, prepared.id, body.nonce);
    const endpoint = await store.findEndpoint(storage.db, application.id);
    if (endpoint === undefined) {
      await this.#deps.bus.publish({
        type: InteractionDispatches.InteractionCreate,
        data: prepared.payload,
        audience: {
          users: [application.botUserId],
          ...(prepared.scene.guildId !== null && prepared.scene.botInGuild
            ? { guildId: prepared.scene.guildId }
            : {}),
        },
      });
      return prepared.id;
    }
    const delivery = this.#deliverToEndpoint(application, endpoint, prepared.payload);
    this.#inFlight.add(delivery);
    void delivery.finally(() => this.#inFlight.delete(delivery));
    return prepared.id;
  }

  /**
   * The choices the app answered the user's autocomplete with, null while it has not: what a client without
   * a gateway session (a scripted user) reads instead of APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE.
   */
  async offeredChoices(userId: string, interactionId: string): Promise<Json[] | null> {
    const row = await store.findInteraction(this.#deps.storage.db, interactionId);
    if (
      !row ||
      row.user_id !== userId ||
      Number(row.type) !== InteractionTypes.ApplicationCommandAutocomplete
    )
      throw new HearthError('UnknownInteraction');
    return row.autocomplete_choices === null ? null : (JSON.parse(row.autocomplete_choices) as Json[]);
  }

  /**
   * The request's `files[n]` as the attachments they will be (ids, `url`), planned before the transaction;
   * only those the interaction names are stored.
   */
  #filesOf(channelId: string, uploads: readonly UploadedFile[]): InteractionFiles {
    const attachments = this.#deps.attachments;
    if (uploads.length === 0) return { byIndex: new Map(), plan: () => undefined };
    const plan = attachments.plan(channelId, uploads, undefined);
    const objects = attachments.plannedObjects(plan);
    // With no `attachments` field the plan takes the uploads in their `files[n]` order.
    const ordered = [...uploads].sort((a, b) => a.index - b.index);
    const byIndex = new Map(ordered.map((upload, i) => [upload.index, objects[i] as unknown as Json]));
    return {
      byIndex,
      plan: (used) => {
        const added = plan.added.filter((_entry, i) => used.has(ordered[i]!.index));
        return added.length === 0 ? undefined : { added, kept: [], removed: [], changed: true };
      },
    };
  }

  /** The interaction's `data` by type, with what storing it needs (the source message, metadata). */
  async #dataOf(
    tx: Executor,
    body: ReturnType<typeof parse<typeof InvokeInteraction>>,
    scene: InteractionScene,
    application: Application,
    user: User,
    files: InteractionFiles,
    used: Set<number>,
    command: CommandView | undefined,
  ): Promise<{
    data: Json;
    message?: Json;
    sourceMessageId?: string;
    meta: Json;
    integrationTypes?: readonly number[];
  }> {
    switch (body.type) {
      case InteractionTypes.ApplicationCommand:
      case InteractionTypes.ApplicationCommandAutocomplete:
        return this.#commandData(tx, body.data, scene, application, command, files, used);
      case InteractionTypes.MessageComponent:
        return this.#componentData(tx, body, scene, application, user);
      case InteractionTypes.ModalSubmit:
        return this.#modalSubmitData(tx, body, application, user, files, used);
      default:
        throw invalidForm(
          'type',
          FormErrors.choices([
            InteractionTypes.ApplicationCommand,
            InteractionTypes.MessageComponent,
            InteractionTypes.ApplicationCommandAutocomplete,
            InteractionTypes.ModalSubmit,
          ]),
        );
    }
  }

  async #commandData(
    tx: Executor,
    input: Json,
    scene: InteractionScene,
    application: Application,
    found: CommandView | undefined,
    files: InteractionFiles,
    used: Set<number>,
  ) {
    const data = parseData(CommandData, input);
    // Attachment options are rewritten to their attachments' ids: the app sees its own copy.
    const options = structuredClone(data.options ?? []) as Json[];
    const view = requireUsable(found, {
      guildId: scene.guildId,
      context: scene.context,
      installedAs: Object.keys(scene.owners).map(Number),
      userPermissions: scene.userPermissions,
    });
    const command = {
      id: view.id,
      name: view.name,
      type: view.type,
      guildId: view.guild_id ?? null,
      integrationTypes: view.integration_types,
    };
    if (command.name !== data.name || command.type !== data.type)
      throw invalidForm('data.name', FormErrors.invalid());
    const resolved: Json = await resolveOptions(
      tx,
      { access: this.#deps.access, getUserIn: this.#deps.users.getUserIn.bind(this.#deps.users) },
      options,
      {
        guildId: scene.guildId,
        botUserId: application.botUserId,
        botInGuild: scene.botInGuild,
      },
      files.byIndex,
      used,
    );
    if (data.target_id !== undefined) {
      if (command.type === ApplicationCommandTypes.User) {
        const target = await this.#deps.users.getUserIn(tx, data.target_id);
        if (!target) throw new HearthError('UnknownUser');
        resolved['users'] = { [target.id]: toUserObject(target) };
      } else if (command.type === ApplicationCommandTypes.Message) {
        const row = await this.#deps.messages.findMessageIn(tx, scene.place.channelId, data.target_id);
        if (!row || (Number(row.flags) & MessageFlags.Ephemeral) !== 0)
          throw new HearthError('UnknownMessage');
        const [message] = await this.#deps.messages.objectsOf(tx, [row], undefined);
        resolved['messages'] = { [row.id]: message };
      }
    }
    return {
      data: {
        id: command.id,
        name: command.name,
        type: command.type,
        ...(data.options === undefined ? {} : { options }),
        ...(Object.keys(resolved).length === 0 ? {} : { resolved }),
        ...(command.guildId === null ? {} : { guild_id: command.guildId }),
        ...(data.target_id === undefined ? {} : { target_id: data.target_id }),
      },
      meta: {
        name: command.name,
        command_type: command.type,
        ...(data.target_id === undefined ? {} : { target_id: data.target_id }),
      },
      integrationTypes: command.integrationTypes,
    };
  }

  /** A component the user used: on a message of this app in this channel, of the type said, with valid values. */
  async #componentData(
    tx: Executor,
    body: ReturnType<typeof parse<typeof InvokeInteraction>>,
    scene: InteractionScene,
    application: Application,
    user: User,
  ) {
    const data = parseData(ComponentData, body.data);
    if (body.message_id === undefined) throw invalidForm('message_id', FormErrors.required());
    const row = await this.#deps.messages.findMessageIn(tx, scene.place.channelId, body.message_id);
    if (!row) throw new HearthError('UnknownMessage');
    const ephemeral = (Number(row.flags) & MessageFlags.Ephemeral) !== 0;
    const own = row.application_id === application.id || row.author_id === application.botUserId;
    if (!own) throw new HearthError('UnknownMessage');
    if (ephemeral && !(await this.#ephemeralFor(tx, row.id, user.id)))
      throw new HearthError('UnknownMessage');
    const component = findComponent(JSON.parse(row.components) as Json[], data.custom_id);
    if (!component || component['type'] !== data.component_type)
      throw invalidForm('data.custom_id', FormErrors.invalid());
    if (component['disabled'] === true) throw invalidForm('data.custom_id', FormErrors.invalid());
    const values = checkSelectValues(component, data.values);
    const [message] = await this.#deps.messages.objectsOf(tx, [row], undefined);
    return {
      data: {
        custom_id: data.custom_id,
        component_type: data.component_type,
        id: component['id'],
        ...(values === undefined ? {} : { values }),
      },
      message: message as unknown as Json,
      sourceMessageId: row.id,
      meta: { interacted_message_id: row.id },
    };
  }

  /** Whether an ephemeral message is this user's (it came from one of their interactions). */
  async #ephemeralFor(tx: Executor, messageId: string, userId: string): Promise<boolean> {
    const link = await tx
      .selectFrom('interaction_messages')
      .innerJoin('interactions', 'interactions.id', 'interaction_messages.interaction_id')
      .select('interactions.user_id')
      .where('interaction_messages.message_id', '=', messageId)
      .executeTakeFirst();
    return link?.user_id === userId;
  }

  /** A modal submit: of a modal shown to this user by this app, once, answering its fields. */
  async #modalSubmitData(
    tx: Executor,
    body: ReturnType<typeof parse<typeof InvokeInteraction>>,
    application: Application,
    user: User,
    files: InteractionFiles,
    used: Set<number>,
  ) {
    const data = parseData(ModalSubmitData, body.data);
    const modal = await store.findModal(tx, data.id);
    if (
      !modal ||
      modal.user_id !== user.id ||
      modal.application_id !== application.id ||
      modal.channel_id !== body.channel_id ||
      modal.custom_id !== data.custom_id
    )
      throw new HearthError('UnknownInteraction');
    const submission = checkSubmission(
      JSON.parse(modal.components) as Json[],
      data.components,
      new Set(files.byIndex.keys()),
    );
    if (!(await store.submitModal(tx, modal.id))) throw new HearthError('UnknownInteraction');
    const source = await store.findInteraction(tx, modal.interaction_id);
    const sourcePayload = source ? (JSON.parse(source.payload) as Json) : undefined;
    // An upload field's values name `files[n]`; the app sees the stored attachments' ids (DOCS File Upload).
    const attachments: Json = {};
    for (const indexes of submission.uploads.values()) {
      for (const index of indexes) {
        const file = files.byIndex.get(index)!;
        used.add(index);
        attachments[file['id'] as string] = file;
      }
    }
    const components = withUploadIds(submission.components, files.byIndex);
    let message: Json | undefined;
    if (source?.source_message_id) {
      const row = await this.#deps.messages.findMessageIn(tx, source.channel_id, source.source_message_id);
      if (row) message = (await this.#deps.messages.objectsOf(tx, [row], undefined))[0] as unknown as Json;
    }
    return {
      data: {
        custom_id: data.custom_id,
        components,
        ...(Object.keys(attachments).length === 0 ? {} : { resolved: { attachments } }),
      },
      ...(message === undefined ? {} : { message }),
      ...(source?.source_message_id ? { sourceMessageId: source.source_message_id } : {}),
      meta: {
        ...(source ? { triggering_interaction_metadata: metadataOf(source, sourcePayload ?? {}) } : {}),
      },
    };
  }

  /** POSTs the interaction to the app's endpoint; its answer is the first response, as the callback route's. */
  async #deliverToEndpoint(application: Application, url: string, payload: Json): Promise<void> {
    const sign = await this.#deps.applications.eventSigner(application.id);
    if (!sign) return;
    const seconds = Math.floor(this.#deps.clock.now() / 1000);
    const answer = await postInteraction(url, JSON.stringify(payload), sign, seconds, this.#deps.outbound);
    const id = payload['id'] as string;
    const token = payload['token'] as string;
    this.#deps.logger.info(
      { component: 'interactions', interactionId: id, status: answer.status, error: answer.error },
      'interaction delivered to endpoint',
    );
    // 202 with no body: the app answers (or has answered) through the callback route.
    if (answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null) return;
    try {
      await this.respond(id, token, answer.body, {}, []);
    } catch (error) {
      this.#deps.logger.info(
        { component: 'interactions', interactionId: id, err: error },
        'endpoint answer refused',
      );
    }
  }

  // ---- Responses (POST /interactions/{id}/{token}/callback) ----

  /**
   * The first response: within 3 s (else 10062), once (else 40060), of a type this interaction takes.
   * Answers the interaction callback response object (`with_response`).
   */
  async respond(
    interactionId: string,
    token: string,
    input: unknown,
    query: { with_response?: boolean },
    uploads: readonly UploadedFile[],
  ): Promise<Json> {
    const { storage, clock } = this.#deps;
    const response = parse(InteractionResponse, input ?? {});
    const row = await store.findInteraction(storage.db, interactionId);
    if (!row || !tokenMatches(row.token_hash, token)) throw new HearthError('UnknownInteraction');
    if (row.response_type !== null) throw new HearthError('InteractionAlreadyAcknowledged');
    if (clock.now() - Number(row.created_at) > InteractionLimits.initialResponseMs)
      throw new HearthError('UnknownInteraction');
    const application = await this.#deps.applications.getApplication(row.application_id);
    if (!application) throw new HearthError('UnknownInteraction');
    this.#checkCallbackType(row, application, response.type);
    const data = (response.data ?? {}) as Json;
    // Everything about the body is checked before the response is claimed, so a bad one can be retried.
    const choices =
      response.type === InteractionCallbackTypes.ApplicationCommandAutocompleteResult
        ? parseData(AutocompleteData, data).choices
        : undefined;
    const modal =
      response.type === InteractionCallbackTypes.Modal
        ? {
            ...parseData(ModalData, data),
            components: parseModalComponents(parseData(ModalData, data).components),
          }
        : undefined;
    if (!(await store.claimResponse(storage.db, row.id, response.type)))
      throw new HearthError('InteractionAlreadyAcknowledged');
    let message: MessageObject | undefined;
    let activityInstanceId: string | undefined;
    try {
      switch (response.type) {
        case InteractionCallbackTypes.ChannelMessageWithSource:
          message = await this.#createMessage(row, application, data, uploads, true);
          break;
        case InteractionCallbackTypes.DeferredChannelMessageWithSource:
          // The user sees the app "thinking": an empty LOADING message, ephemeral if the deferral said so.
          message = await this.#createMessage(
            row,
            application,
            { flags: ((data['flags'] as number | undefined) ?? 0) & MessageFlags.Ephemeral },
            [],
            true,
            true,
          );
          break;
        case InteractionCallbackTypes.UpdateMessage:
          message = await this.#updateSource(row, application, data, uploads);
          break;
        case InteractionCallbackTypes.Modal:
          await this.#showModal(row, modal!);
          break;
        case InteractionCallbackTypes.ApplicationCommandAutocompleteResult:
          await this.#offerChoices(row, choices!);
          break;
        case InteractionCallbackTypes.LaunchActivity:
          activityInstanceId = `i-${row.id}-${application.id}`;
          break;
        default:
          break;
      }
    } catch (error) {
      await store.updateInteraction(storage.db, row.id, { response_type: null });
      throw error;
    }
    await this.#settle(row, InteractionDispatches.InteractionSuccess);
    if (query.with_response !== true) return {};
    const deferred = response.type === InteractionCallbackTypes.DeferredChannelMessageWithSource;
    return {
      interaction: {
        id: row.id,
        type: Number(row.type),
        ...(activityInstanceId ? { activity_instance_id: activityInstanceId } : {}),
        ...(message ? { response_message_id: message.id } : {}),
        ...(message ? { response_message_loading: deferred } : {}),
        ...(message ? { response_message_ephemeral: (message.flags & MessageFlags.Ephemeral) !== 0 } : {}),
      },
      // The resource is what the response made: a message (types 4 and 7) or an activity instance; a
      // deferral's LOADING message is named by `response_message_id` only (DOCS Interaction Callback Resource).
      ...(activityInstanceId
        ? { resource: { type: response.type, activity_instance: { id: activityInstanceId } } }
        : message && !deferred
          ? { resource: { type: response.type, message } }
          : {}),
    };
  }

  /** Which callback types this interaction takes (DOCS Interaction Callback Type, and its footnotes). */
  #checkCallbackType(row: store.InteractionRow, application: Application, type: number): void {
    const T = InteractionCallbackTypes;
    const kind = Number(row.type);
    let allowed: number[];
    if (kind === InteractionTypes.ApplicationCommandAutocomplete)
      allowed = [T.ApplicationCommandAutocompleteResult];
    else {
      allowed = [T.ChannelMessageWithSource, T.DeferredChannelMessageWithSource];
      if (kind === InteractionTypes.MessageComponent || row.source_message_id !== null)
        allowed.push(T.DeferredUpdateMessage, T.UpdateMessage);
      if (kind !== InteractionTypes.ModalSubmit) allowed.push(T.Modal);
      if (isInEffect('premiumRequiredResponse', this.#deps.clock.now())) allowed.push(T.PremiumRequired);
      // LAUNCH_ACTIVITY only for apps with Activities enabled (the EMBEDDED flag).
      if ((application.flags & ApplicationFlags.Embedded) !== 0n && kind !== InteractionTypes.ModalSubmit)
        allowed.push(T.LaunchActivity);
    }
    if (!allowed.includes(type)) throw invalidForm('type', FormErrors.choices(allowed.sort((a, b) => a - b)));
  }

  /** Tells the user's sessions the outcome once: INTERACTION_SUCCESS, or INTERACTION_FAILURE when overdue. */
  async #settle(row: store.InteractionRow, outcome: string): Promise<void> {
    if (!(await store.settle(this.#deps.storage.db, row.id))) return;
    await this.#tellUser(outcome, row.user_id, row.id, row.nonce ?? undefined);
  }

  async #tellUser(type: string, userId: string, id: string, nonce: string | undefined): Promise<void> {
    await this.#deps.bus.publish({
      type,
      data: { id, ...(nonce === undefined ? {} : { nonce }) },
      audience: { users: [userId] },
    });
  }

  /**
   * The 3-second rule for the user: interactions nobody answered in time fail (INTERACTION_FAILURE). Run by
   * a sweep; the clock decides what is overdue.
   */
  async sweep(): Promise<number> {
    const before = this.#deps.clock.now() - InteractionLimits.initialResponseMs;
    const rows = await store.overdue(this.#deps.storage.db, before, 100);
    for (const row of rows)
      if (row.response_type === null) await this.#settle(row, InteractionDispatches.InteractionFailure);
    return rows.length;
  }

  /**
   * An autocomplete's choices reach the user typing as the platform client receives them: the gateway's
   * APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE on their sessions, with the nonce their request carried.
   */
  async #offerChoices(row: store.InteractionRow, choices: readonly Json[]): Promise<void> {
    await store.updateInteraction(this.#deps.storage.db, row.id, {
      autocomplete_choices: JSON.stringify(choices),
    });
    await this.#deps.bus.publish({
      type: InteractionDispatches.ApplicationCommandAutocompleteResponse,
      data: {
        id: row.id,
        application_id: row.application_id,
        choices,
        ...(row.nonce === null ? {} : { nonce: row.nonce }),
      },
      audience: { users: [row.user_id] },
    });
  }

  async #showModal(
    row: store.InteractionRow,
    modal: { custom_id: string; title: string; components: Json[] },
  ) {
    const id = this.#deps.snowflakes.next();
    await store.insertModal(this.#deps.storage.db, {
      id,
      interaction_id: row.id,
      application_id: row.application_id,
      user_id: row.user_id,
      channel_id: row.channel_id,
      custom_id: modal.custom_id,
      components: JSON.stringify(modal.components),
      created_at: this.#deps.clock.now(),
    });
    await this.#deps.bus.publish({
      type: InteractionDispatches.InteractionModalCreate,
      data: {
        id,
        application_id: row.application_id,
        channel_id: row.channel_id,
        custom_id: modal.custom_id,
        title: modal.title,
        components: modal.components,
        ...(row.nonce === null ? {} : { nonce: row.nonce }),
      },
      audience: { users: [row.user_id] },
    });
  }

  // ---- Messages of an interaction ----

  /** A message of the interaction (its response, or a follow-up), through the message core. */
  async #createMessage(
    row: store.InteractionRow,
    application: Application,
    data: Json,
    uploads: readonly UploadedFile[],
    original: boolean,
    loading = false,
  ): Promise<MessageObject> {
    const payload = JSON.parse(row.payload) as Json;
    const place = placeFrom(payload);
    const meta = metadataOf(row, payload);
    const followupOf = original ? undefined : row.original_message_id;
    const message = await this.#deps.messages.createForInteraction(
      botActor(application),
      place,
      data,
      uploads,
      {
        type: messageTypeOf(row, payload),
        ephemeral: false,
        userId: row.user_id,
        interactionMetadata: followupOf ? { ...meta, original_response_message_id: followupOf } : meta,
        interaction: legacyInteractionOf(row, payload),
        webhookId: application.id,
        applicationId: application.id,
        loading,
      },
    );
    await store.insertInteractionMessage(this.#deps.storage.db, {
      message_id: message.id,
      interaction_id: row.id,
      channel_id: row.channel_id,
      original: original ? 1 : 0,
    });
    if (original)
      await store.updateInteraction(this.#deps.storage.db, row.id, { original_message_id: message.id });
    return message;
  }

  /** UPDATE_MESSAGE: the message the component is on is edited (DOCS callback type 7). */
  async #updateSource(
    row: store.InteractionRow,
    application: Application,
    data: Json,
    uploads: readonly UploadedFile[],
  ): Promise<MessageObject> {
    if (row.source_message_id === null) throw new HearthError('UnknownMessage');
    const place = placeFrom(JSON.parse(row.payload) as Json);
    const { flags: _flags, ...changes } = data;
    return this.#deps.messages.editForInteraction(
      botActor(application),
      place,
      row.source_message_id,
      changes,
      uploads,
    );
  }

  // ---- The token's webhook routes (/webhooks/{application_id}/{token}…) ----

  /**
   * The interaction a token names, for the webhook routes: 10015 for an unknown token or one older than
   * 15 minutes; 50027 for one invalidated because nobody answered within 3 s.
   */
  async #byToken(
    applicationId: string,
    token: string,
  ): Promise<{ row: store.InteractionRow; application: Application }> {
    const { storage, clock } = this.#deps;
    const row = await store.findInteractionByToken(storage.db, applicationId, hashToken(token));
    if (!row) throw new HearthError('UnknownWebhook');
    const age = clock.now() - Number(row.created_at);
    if (age > InteractionLimits.tokenLifetimeMs) throw new HearthError('UnknownWebhook');
    if (row.response_type === null) {
      if (age > InteractionLimits.initialResponseMs) throw new HearthError('InvalidWebhookToken');
      throw new HearthError('UnknownWebhook');
    }
    const application = await this.#deps.applications.getApplication(applicationId);
    if (!application) throw new HearthError('UnknownWebhook');
    return { row, application };
  }

  /** POST /webhooks/{app}/{token}: a follow-up; at most 5 when only a user install authorized it (40094). */
  async followup(applicationId: string, token: string, input: unknown, uploads: readonly UploadedFile[]) {
    const { row, application } = await this.#byToken(applicationId, token);
    const max = Number(row.user_install_only) === 1 ? InteractionLimits.userInstallFollowupsMax : undefined;
    if (!(await store.countFollowup(this.#deps.storage.db, row.id, max)))
      throw new HearthError('MaximumInteractionFollowups');
    try {
      // While a deferred response still shows LOADING, the first follow-up replaces it (as an edit would);
      // its ephemerality is the deferral's.
      const placeholder = await this.#placeholderOf(row);
      if (placeholder) {
        const { flags, ...rest } = (input ?? {}) as Json;
        const kept = Number(placeholder.flags) & MessageFlags.Ephemeral;
        const body =
          typeof flags === 'number' ? { ...rest, flags: (flags & ~MessageFlags.Ephemeral) | kept } : rest;
        return await this.#deps.messages.editForInteraction(
          botActor(application),
          this.#placeOfMessage(row, placeholder),
          placeholder.id,
          body,
          uploads,
        );
      }
      return await this.#createMessage(row, application, (input ?? {}) as Json, uploads, false);
    } catch (error) {
      await this.#deps.storage.db
        .updateTable('interactions')
        .set((eb) => ({ followups: eb('followups', '-', 1) }))
        .where('id', '=', row.id)
        .execute();
      throw error;
    }
  }

  /** A deferred response's original message while it still shows LOADING. */
  async #placeholderOf(row: store.InteractionRow) {
    if (Number(row.response_type) !== InteractionCallbackTypes.DeferredChannelMessageWithSource)
      return undefined;
    if (row.original_message_id === null) return undefined;
    const message = await this.#deps.messages.findMessageIn(
      this.#deps.storage.db,
      row.channel_id,
      row.original_message_id,
    );
    return message && (Number(message.flags) & MessageFlags.Loading) !== 0 ? message : undefined;
  }

  /** Where a message of the interaction is shown: an ephemeral one to its user alone. */
  #placeOfMessage(row: store.InteractionRow, message: { flags: number | string } | undefined): Place {
    const place = placeFrom(JSON.parse(row.payload) as Json);
    return message && (Number(message.flags) & MessageFlags.Ephemeral) !== 0
      ? { ...place, audience: { users: [row.user_id] } }
      : place;
  }

  /** The message a token's route names: `@original` or one of its follow-ups (10008 otherwise). */
  async #messageOf(row: store.InteractionRow, messageId: string): Promise<string | undefined> {
    if (messageId === '@original') return row.original_message_id ?? undefined;
    const link = await store.findInteractionMessage(this.#deps.storage.db, row.id, messageId);
    return link?.message_id;
  }

  async getMessage(applicationId: string, token: string, messageId: string): Promise<MessageObject> {
    const { row } = await this.#byToken(applicationId, token);
    const id = await this.#messageOf(row, messageId);
    const db = this.#deps.storage.db;
    const message =
      id === undefined ? undefined : await this.#deps.messages.findMessageIn(db, row.channel_id, id);
    if (!message) throw new HearthError('UnknownMessage');
    const [object] = await this.#deps.messages.objectsOf(db, [message], undefined);
    return object!;
  }

  /** PATCH …/messages/{id}: a deferred response's first edit replaces its LOADING placeholder. */
  async editMessage(
    applicationId: string,
    token: string,
    messageId: string,
    input: unknown,
    uploads: readonly UploadedFile[],
  ): Promise<MessageObject> {
    const { row, application } = await this.#byToken(applicationId, token);
    const id = await this.#messageOf(row, messageId);
    if (id === undefined) {
      if (messageId === '@original' && row.source_message_id !== null)
        return this.#deps.messages.editForInteraction(
          botActor(application),
          placeFrom(JSON.parse(row.payload) as Json),
          row.source_message_id,
          input,
          uploads,
        );
      throw new HearthError('UnknownMessage');
    }
    const current = await this.#deps.messages.findMessageIn(this.#deps.storage.db, row.channel_id, id);
    const place = this.#placeOfMessage(row, current);
    return this.#deps.messages.editForInteraction(botActor(application), place, id, input, uploads);
  }

  async deleteMessage(applicationId: string, token: string, messageId: string): Promise<void> {
    const { row, application } = await this.#byToken(applicationId, token);
    const id = await this.#messageOf(row, messageId);
    if (id === undefined) throw new HearthError('UnknownMessage');
    const current = await this.#deps.messages.findMessageIn(this.#deps.storage.db, row.channel_id, id);
    await this.#deps.messages.deleteForInteraction(
      botActor(application),
      this.#placeOfMessage(row, current),
      id,
    );
    await store.deleteInteractionMessage(this.#deps.storage.db, id);
  }

  // ---- The interactions endpoint URL (application field) ----

  async endpointOf(applicationId: string): Promise<string | null> {
    return (await store.findEndpoint(this.#deps.storage.db, applicationId)) ?? null;
  }

  /**
   * Setting `interactions_endpoint_url`: a new URL must answer a signed PING with PONG and refuse a bad
   * signature with 401 (DOCS overview), else 50035. Answers the write, for the caller's transaction.
   */
  async prepareEndpoint(applicationId: string, url: string | null): Promise<(db: Executor) => Promise<void>> {
    if (url !== null && url !== (await this.endpointOf(applicationId))) {
      const field = 'interactions_endpoint_url';
      if (outboundUrlProblem(url, this.#deps.outbound, ENDPOINT_URL_RULES) !== undefined)
        throw invalidForm(field, FormErrors.url());
      const sign = await this.#deps.applications.eventSigner(applicationId);
      if (!sign) throw new HearthError('UnknownApplication');
      const id = this.#deps.snowflakes.next();
      const seconds = Math.floor(this.#deps.clock.now() / 1000);
      const body = pingBody(applicationId, id, newToken(id));
      const verdict = await verifyEndpoint(url, body, sign, seconds, this.#deps.outbound);
      this.#deps.logger.info(
        { component: 'interactions', applicationId, url, ...verdict },
        'endpoint verification',
      );
      if (!verdict.ok) throw invalidForm(field, FormErrors.interactionsEndpointUrlInvalid());
    }
    return (db) => store.saveEndpoint(db, applicationId, url);
  }

  /** Waits for deliveries to endpoints in flight (server shutdown). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }
}

function isCommand(type: number): boolean {
  return (
    type === InteractionTypes.ApplicationCommand || type === InteractionTypes.ApplicationCommandAutocomplete
  );
}

function parseData<S extends Parameters<typeof parse>[0]>(schema: S, value: unknown) {
  return parse(schema, value);
}

function tokenMatches(hash: string, token: string): boolean {
  const presented = Buffer.from(hashToken(token));
  const stored = Buffer.from(hash);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

function botActor(application: Application): Actor {
  return { userId: application.botUserId, bot: true, applicationId: application.id };
}

/** The place kept with the interaction: where its messages go, with the app's permissions. */
function placeJson(place: Place): Json {
  return {
    channelId: place.channelId,
    type: place.type,
    guildId: place.guildId,
    rateLimitPerUser: 0,
    ...(place.recipients ? { recipients: place.recipients } : {}),
    ...(place.audience ? { audience: place.audience } : {}),
  };
}

function placeFrom(payload: Json): Place {
  const stored = payload['place'] as Omit<Place, 'permissions'>;
  return { ...stored, permissions: BigInt((payload['app_permissions'] as string) ?? '0') };
}

/** The invoking user as the message metadata carries them. */
function userOf(payload: Json): Json {
  return ((payload['member'] as Json | undefined)?.['user'] ?? payload['user']) as Json;
}

/** `interaction_metadata` (DOCS message: Message Interaction Metadata), its `user` with `id` (seed). */
function metadataOf(row: store.InteractionRow, payload: Json): Json {
  const meta = (payload['meta'] ?? {}) as Json;
  const data = (payload['data'] ?? {}) as Json;
  const out: Json = {
    id: row.id,
    type: Number(row.type),
    user: userOf(payload),
    authorizing_integration_owners: payload['authorizing_integration_owners'],
  };
  if (meta['name'] !== undefined) out['name'] = meta['name'];
  if (meta['command_type'] !== undefined) out['command_type'] = meta['command_type'];
  if (meta['command_type'] === ApplicationCommandTypes.User && meta['target_id'] !== undefined) {
    const users = ((data['resolved'] as Json | undefined)?.['users'] ?? {}) as Json;
    out['target_user'] = users[meta['target_id'] as string];
  }
  if (meta['command_type'] === ApplicationCommandTypes.Message && meta['target_id'] !== undefined)
    out['target_message_id'] = meta['target_id'];
  if (meta['interacted_message_id'] !== undefined)
    out['interacted_message_id'] = meta['interacted_message_id'];
  if (meta['triggering_interaction_metadata'] !== undefined)
    out['triggering_interaction_metadata'] = meta['triggering_interaction_metadata'];
  return out;
}

/** The deprecated `interaction` object (DOCS message: Message Interaction). */
function legacyInteractionOf(row: store.InteractionRow, payload: Json): Json {
  const meta = (payload['meta'] ?? {}) as Json;
  const member = payload['member'] as Json | undefined;
  const { user: _user, permissions: _permissions, ...partialMember } = member ?? {};
  return {
    id: row.id,
    type: Number(row.type),
    name: (meta['name'] as string | undefined) ?? '',
    user: userOf(payload),
    ...(member ? { member: partialMember } : {}),
  };
}

/** 20 for chat input commands, 23 for context menus; component and modal-submit responses are DEFAULT (0). */
function messageTypeOf(row: store.InteractionRow, payload: Json): number {
  const commandType = ((payload['meta'] ?? {}) as Json)['command_type'];
  if (Number(row.type) === InteractionTypes.ApplicationCommand) {
    return commandType === ApplicationCommandTypes.ChatInput
      ? MessageTypes.ChatInputCommand
      : MessageTypes.ContextMenuCommand;
  }
  return MessageTypes.Default;
}

/** A submission's components with each file upload's values as the ids of the attachments they name. */
function withUploadIds(components: readonly Json[], files: ReadonlyMap<number, Json>): Json[] {
  return components.map((component) => {
    const out: Json = { ...component };
    if (component['type'] === ComponentTypes.FileUpload && Array.isArray(component['values']))
      out['values'] = (component['values'] as string[]).map((value) => files.get(Number(value))!['id']);
    if (component['component']) out['component'] = withUploadIds([component['component'] as Json], files)[0];
    if (Array.isArray(component['components']))
      out['components'] = withUploadIds(component['components'] as Json[], files);
    return out;
  });
}

/** The component of a message with this custom id, anywhere in its tree. */
function findComponent(components: readonly Json[], customId: string): Json | undefined {
  for (const component of components) {
    if (component['custom_id'] === customId) return component;
    const children = [
      ...((component['components'] as Json[] | undefined) ?? []),
      ...(component['accessory'] ? [component['accessory'] as Json] : []),
    ];
    const found = findComponent(children, customId);
    if (found) return found;
  }
  return undefined;
}

/** A select's chosen values: counts within its min/max; a string select's are among its options. */
function checkSelectValues(component: Json, values: readonly string[] | undefined): string[] | undefined {
  if (component['type'] === ComponentTypes.Button) {
    if (values !== undefined) throw invalidForm('data.values', FormErrors.invalid());
    return undefined;
  }
  const chosen = [...(values ?? [])];
  const min = (component['min_values'] as number | undefined) ?? 1;
  const max = (component['max_values'] as number | undefined) ?? 1;
  if (chosen.length < min || chosen.length > max)
    throw invalidForm('data.values', FormErrors.badLength(min, max));
  if (component['type'] === ComponentTypes.StringSelect) {
    const options = new Set(((component['options'] as Json[] | undefined) ?? []).map((o) => o['value']));
    if (!chosen.every((value) => options.has(value))) throw invalidForm('data.values', FormErrors.invalid());
  }
  return chosen;
}
