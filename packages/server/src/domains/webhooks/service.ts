import {
  EventWebhooksStatus,
  type EventWebhooksStatusValue,
  FormErrors,
  WEBHOOK_MAX_ATTEMPTS,
  webhookRetryDelay,
} from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { type OutboundPolicy, outboundUrlProblem } from '../../kernel/outbound.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Executor, Storage } from '../../storage/database.js';
import { forgetEventCause, requestIdOfEvent, type SkippedEvent, skipReason } from '../../storage/outbox.js';
import { eventBody, type PostOutcome, pingBody, postSigned, type Signer } from './delivery.js';
import * as store from './store.js';

/** An application's event webhook settings (PROTOCOL.md §F.1). */
export interface EventWebhookSettings {
  url: string | null;
  status: EventWebhooksStatusValue;
  types: string[];
  /** Why the platform disabled delivery (status 3). */
  disabledReason: string | null;
}

export interface EventWebhookChanges {
  event_webhooks_url?: string | null | undefined;
  event_webhooks_status?: 1 | 2 | undefined;
  event_webhooks_types?: string[] | undefined;
}

/** One event of the delivery log, with its attempts. */
export interface DeliveryLogEntry {
  id: string;
  type: string;
  status: string;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  overrideUrl: string | null;
  tries: { at: number; url: string; httpStatus: number | null; error: string | null; durationMs: number }[];
}

export interface WebhooksDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  logger: Logger;
  /** The application's signer, or undefined for an unknown application (told by the applications domain). */
  signerFor: (applicationId: string) => Promise<Signer | undefined>;
  /** Where deliveries and PINGs may go (`--allow-loopback-urls`). */
  outbound: OutboundPolicy;
  /** Told of each settled attempt's outcome (metrics). */
  onOutcome?: (outcome: 'delivered' | 'retry' | 'failed' | 'skipped') => void;
}

/** Receivers may be `http:` on a development machine; otherwise `https:` only (kernel/outbound.ts). */
const RECEIVER_URL = { http: true, query: true } as const;

const DEFAULT_SETTINGS: EventWebhookSettings = {
  url: null,
  status: EventWebhooksStatus.Disabled,
  types: [],
  disabledReason: null,
};

/** What happened to one delivery, to be written in one transaction with its attempt. */
type Outcome =
  | { kind: 'delivered'; url: string; post: PostOutcome }
  | { kind: 'retry'; url: string; post: PostOutcome }
  | { kind: 'failed'; url: string; post: PostOutcome; disable: boolean }
  | { kind: 'skipped'; reason: string };

/** Outgoing webhook events: each application's settings, and the delivery of the outbox to them. */
export class WebhooksService {
  readonly #deps: WebhooksDeps;

  constructor(deps: WebhooksDeps) {
    this.#deps = deps;
  }

  async settings(applicationId: string): Promise<EventWebhookSettings> {
    const row = await store.findSettings(this.#deps.storage.db, applicationId);
    return row ? toSettings(row) : DEFAULT_SETTINGS;
  }

  /**
   * PATCH /applications/@me's event webhook fields. A new URL, or enabling delivery again, first PINGs the
   * URL (signed like an event) and keeps the old settings unless it answers 204 (§F.2). Writes nothing:
   * answers the write, for the caller's transaction (a refused request saves nothing, issue 21).
   */
  async prepareSettings(
    applicationId: string,
    changes: EventWebhookChanges,
  ): Promise<(db: Executor) => Promise<void>> {
    const { clock } = this.#deps;
    const current = await this.settings(applicationId);
    const url = changes.event_webhooks_url === undefined ? current.url : changes.event_webhooks_url;
    const status: EventWebhooksStatusValue =
      changes.event_webhooks_status ??
      (changes.event_webhooks_url === undefined
        ? current.status
        : url === null
          ? EventWebhooksStatus.Disabled
          : EventWebhooksStatus.Enabled);
    if (url !== null) this.checkUrl('event_webhooks_url', url);
    if (status === EventWebhooksStatus.Enabled && url === null) {
      throw invalidForm('event_webhooks_url', FormErrors.required());
    }
    const newUrl = url !== null && url !== current.url;
    const reenabled =
      status === EventWebhooksStatus.Enabled && current.status !== EventWebhooksStatus.Enabled;
    if (url !== null && (newUrl || reenabled) && !(await this.ping(applicationId, url))) {
      throw invalidForm('event_webhooks_url', FormErrors.eventWebhooksUrlInvalid());
    }
    const row = {
      application_id: applicationId,
      url,
      status,
      types: JSON.stringify(changes.event_webhooks_types ?? current.types),
      disabled_reason: status === EventWebhooksStatus.DisabledByDiscord ? current.disabledReason : null,
      updated_at: clock.now(),
    };
    return (db) => store.saveSettings(db, row);
  }

  /** Refuses, with 50035 on `field`, a URL the outbound policy would never call (scheme, credentials, address). */
  checkUrl(field: string, url: string): void {
    const problem = outboundUrlProblem(url, this.#deps.outbound, RECEIVER_URL);
    if (problem === undefined) return;
    this.#deps.logger.info({ component: 'webhooks', field, problem }, 'webhooks url refused');
    throw invalidForm(field, FormErrors.url());
  }

  /**
   * A URL to be stored (the application's or a lobby's override): allowed by the policy, and answering the
   * signed PING with 204 (§F.2); 50035 on `field` otherwise.
   */
  async verifyUrl(applicationId: string, field: string, url: string): Promise<void> {
    this.checkUrl(field, url);
    if (!(await this.ping(applicationId, url)))
      throw invalidForm(field, FormErrors.eventWebhooksUrlInvalid());
  }

  /** Sends the verification PING; true when the URL answered 204 in time. */
  async ping(applicationId: string, url: string): Promise<boolean> {
    const sign = await this.#deps.signerFor(applicationId);
    if (!sign) throw new HearthError('UnknownApplication');
    const post = await postSigned(
      url,
      pingBody(applicationId),
      sign,
      this.#seconds(),
      (s) => s === 204,
      this.#deps.outbound,
    );
    this.#deps.logger.info(
      { component: 'webhooks', applicationId, url, status: post.status, error: post.error },
      'webhooks ping',
    );
    return post.error === null;
  }

  // ---- Delivery ----

  /**
   * Delivers one leased batch. Rows of applications that have not subscribed to the type, have no URL or
   * have delivery disabled are marked skipped and stay in the log (replayable): the platform sends an
   * application only the types it subscribed to, and nothing while it is disabled (§F.1).
   */
  async deliverBatch(owner: string, rows: store.OutboxRow[]): Promise<void> {
    const { storage } = this.#deps;
    const applicationIds = [...new Set(rows.map((row) => row.application_id))];
    const settings = new Map(
      (await store.findSettingsOf(storage.db, applicationIds)).map((row) => [
        row.application_id,
        toSettings(row),
      ]),
    );
    const signers = new Map<string, Promise<Signer | undefined>>();
    const signerOf = (id: string) => {
      let signer = signers.get(id);
      if (!signer) {
        signer = this.#deps.signerFor(id);
        signers.set(id, signer);
      }
      return signer;
    };
    const results = await Promise.all(
      rows.map(async (row) => {
        // Backoff counts from the attempt's start, not from when its answer came.
        const startedAt = this.#deps.clock.now();
        const outcome = await this.#attempt(
          row,
          settings.get(row.application_id) ?? DEFAULT_SETTINGS,
          signerOf,
        );
        return { row, outcome, startedAt };
      }),
    );
    await this.#settle(owner, results);
  }

  async #attempt(
    row: store.OutboxRow,
    settings: EventWebhookSettings,
    signerOf: (id: string) => Promise<Signer | undefined>,
  ): Promise<Outcome> {
    const skipped = skipReason(settings, row.type);
    // skipReason already answers for a null URL; the second test is for the compiler.
    if (skipped !== undefined || settings.url === null) {
      return { kind: 'skipped', reason: skipped ?? 'no event webhooks URL' };
    }
    const sign = await signerOf(row.application_id);
    if (!sign) return { kind: 'skipped', reason: 'unknown application' };
    const url = row.override_url ?? settings.url;
    const body = eventBody({
      applicationId: row.application_id,
      type: row.type,
      createdAt: Number(row.created_at),
      payload: row.payload,
    });
    const post = await postSigned(
      url,
      body,
      sign,
      this.#seconds(),
      (s) => s >= 200 && s < 300,
      this.#deps.outbound,
    );
    if (post.error === null) return { kind: 'delivered', url, post };
    if (row.attempts + 1 < WEBHOOK_MAX_ATTEMPTS) return { kind: 'retry', url, post };
    // An override URL is the lobby's, not the application's: its failures do not disable the application.
    return { kind: 'failed', url, post, disable: row.override_url === null };
  }

  /** Events recorded already skipped (storage/outbox.ts), once committed: counted and logged as if settled. */
  reportSkipped(events: readonly SkippedEvent[]): void {
    for (const event of events) {
      this.#deps.onOutcome?.('skipped');
      this.#deps.logger.debug(
        {
          component: 'webhooks',
          reqId: event.requestId,
          applicationId: event.applicationId,
          eventId: event.id,
          type: event.type,
          reason: event.reason,
        },
        'webhook event skipped',
      );
    }
  }

  /** Writes the batch's outcomes and attempts in one transaction (one commit for the whole batch). */
  async #settle(owner: string, results: { row: store.OutboxRow; outcome: Outcome; startedAt: number }[]) {
    const { storage, clock, logger } = this.#deps;
    const now = clock.now();
    const disabled = new Set<store.OutboxRow>();
    const settled = new Set<store.OutboxRow>();
    await storage.transaction(async (tx) => {
      for (const { row, outcome, startedAt } of results) {
        const written = await this.#write(tx, owner, row, outcome, startedAt, now);
        if (written.settled) settled.add(row);
        if (written.disabled) disabled.add(row);
      }
    });
    for (const { row, outcome } of results) {
      if (!settled.has(row)) continue;
      this.#deps.onOutcome?.(outcome.kind);
      // The request that recorded the event on this node, so that its delivery can be traced to it.
      const reqId = requestIdOfEvent(row.id);
      if (outcome.kind !== 'retry') forgetEventCause(row.id);
      const log = {
        component: 'webhooks',
        reqId,
        applicationId: row.application_id,
        eventId: row.id,
        type: row.type,
      };
      const attempts = row.attempts + 1;
      if (outcome.kind === 'skipped')
        logger.debug({ ...log, reason: outcome.reason }, 'webhook event skipped');
      else if (outcome.kind === 'delivered') logger.debug({ ...log, attempts }, 'webhook event delivered');
      else logger.warn({ ...log, attempts, error: outcome.post.error }, `webhook event ${outcome.kind}`);
      if (disabled.has(row) && outcome.kind === 'failed') {
        logger.warn(
          { ...log, url: outcome.url },
          'event webhooks disabled after repeated failures (event_webhooks_status 3)',
        );
      }
    }
  }

  /** One row's outcome; nothing when this node's lease was taken over meanwhile. */
  async #write(
    tx: Executor,
    owner: string,
    row: store.OutboxRow,
    outcome: Outcome,
    startedAt: number,
    now: number,
  ): Promise<{ settled: boolean; disabled: boolean }> {
    if (outcome.kind === 'skipped') {
      const settled = await store.settle(tx, row.id, owner, {
        status: 'skipped',
        finished_at: now,
        last_error: outcome.reason,
      });
      return { settled, disabled: false };
    }
    const attempts = row.attempts + 1;
    const settled = await store.settle(tx, row.id, owner, {
      attempts,
      last_error: outcome.post.error,
      ...(outcome.kind === 'retry'
        ? { next_attempt_at: startedAt + webhookRetryDelay(attempts) }
        : { status: outcome.kind, finished_at: now }),
    });
    if (!settled) return { settled, disabled: false };
    await store.insertAttempt(tx, {
      id: this.#deps.snowflakes.next(),
      event_id: row.id,
      application_id: row.application_id,
      attempt: attempts,
      url: outcome.url,
      http_status: outcome.post.status,
      error: outcome.post.error,
      duration_ms: outcome.post.durationMs,
      created_at: startedAt,
    });
    if (outcome.kind !== 'failed' || !outcome.disable) return { settled, disabled: false };
    const reason = `event ${row.id} failed ${attempts} times; last: ${outcome.post.error}`;
    return {
      settled,
      disabled: await store.disableSettings(tx, row.application_id, outcome.url, reason, now),
    };
  }

  #seconds(): number {
    return Math.floor(this.#deps.clock.now() / 1000);
  }

  // ---- Operator tools (CLI) ----

  /** The most recent events of an application, newest first, each with its attempts. */
  async log(applicationId: string, limit = 50): Promise<DeliveryLogEntry[]> {
    const { db } = this.#deps.storage;
    const events = await store.listEvents(db, applicationId, limit);
    const attempts = await store.listAttempts(
      db,
      events.map((event) => event.id),
    );
    return events.map((event) => ({
      id: event.id,
      type: event.type,
      status: event.status,
      attempts: event.attempts,
      createdAt: Number(event.created_at),
      nextAttemptAt: event.status === 'pending' ? Number(event.next_attempt_at) : null,
      lastError: event.last_error,
      overrideUrl: event.override_url,
      tries: attempts
        .filter((attempt) => attempt.event_id === event.id)
        .map((attempt) => ({
          at: Number(attempt.created_at),
          url: attempt.url,
          httpStatus: attempt.http_status,
          error: attempt.error,
          durationMs: attempt.duration_ms,
        })),
    }));
  }

  /**
   * Queues finished events again, due now: one event by id (whatever became of it), or every failed and
   * skipped event of the application. Answers how many were queued.
   */
  async replay(applicationId: string, eventId?: string): Promise<number> {
    const { storage, clock } = this.#deps;
    const statuses = eventId === undefined ? ['failed', 'skipped'] : ['delivered', 'failed', 'skipped'];
    return store.requeue(
      storage.db,
      applicationId,
      { ...(eventId === undefined ? {} : { eventId }), statuses },
      clock.now(),
    );
  }
}

function toSettings(row: store.SettingsRow): EventWebhookSettings {
  return {
    url: row.url,
    status: row.status as EventWebhooksStatusValue,
    types: JSON.parse(row.types) as string[],
    disabledReason: row.disabled_reason,
  };
}
