import { FormErrors } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Storage } from '../../storage/database.js';
import { recordWebhookEvent } from '../../storage/outbox.js';
import type { AccountsService } from '../accounts/service.js';
import { toUserObject } from '../accounts/service.js';
import * as store from './quest-store.js';
import type { ApplicationsService } from './service.js';

export interface QuestsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  accounts: AccountsService;
  applications: ApplicationsService;
}

/** What QUEST_USER_ENROLLMENT carries: the docs show no payload, so Hearth names the quest, the user and when. */
export interface QuestEnrollment {
  quest_id: string;
  user_id: string;
  user: ReturnType<typeof toUserObject>;
  enrolled_at: string;
}

/**
 * Quests are run by the platform (seed: Events, QUEST_USER_ENROLLMENT), so an operator enrolls a player;
 * the application hears of it through its signed webhook events, queued in the same transaction.
 */
export class QuestsService {
  readonly #deps: QuestsDeps;

  constructor(deps: QuestsDeps) {
    this.#deps = deps;
  }

  async enroll(input: { applicationId: string; userId: string; questId: string }): Promise<QuestEnrollment> {
    const { storage, clock, snowflakes, accounts, applications } = this.#deps;
    if (!/^\d{1,20}$/.test(input.questId)) throw invalidForm('quest_id', FormErrors.snowflake(input.questId));
    await applications.requireApplication(input.applicationId);
    const user = await accounts.getUser(input.userId);
    if (!user) throw new HearthError('UnknownUser');
    const now = clock.now();
    const enrollment = {
      quest_id: input.questId,
      user_id: user.id,
      user: toUserObject(user),
      enrolled_at: new Date(now).toISOString(),
    };
    await storage.transaction(async (tx) => {
      // A player enrolls in a quest once; a second enrollment is refused rather than announced again.
      if (await store.isEnrolled(tx, input.applicationId, input.questId, user.id))
        throw invalidForm('user_id', FormErrors.invalid());
      await store.insertEnrollment(tx, {
        application_id: input.applicationId,
        quest_id: input.questId,
        user_id: user.id,
        enrolled_at: now,
      });
      await recordWebhookEvent(tx, {
        id: snowflakes.next(),
        type: 'QUEST_USER_ENROLLMENT',
        applicationId: input.applicationId,
        data: enrollment,
        createdAt: now,
      });
    });
    return enrollment;
  }
}
