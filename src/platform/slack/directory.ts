// People of the workspace as we need them: a name for transcripts and whether they administer
// the workspace (for moderator verbs). Read with users.info, cached for a few minutes.
import type { Logger } from '../../log.ts';
import type { WebClient } from './identities.ts';

export interface SlackPerson {
  id: string;
  name: string;
  /** Workspace admin or owner. */
  isAdmin: boolean;
  isBot: boolean;
  /** False when users.info failed: the name is the id and admin status unknown (treated as no). */
  known: boolean;
}

const TTL_MS = 10 * 60 * 1000;
const FAILED_TTL_MS = 30 * 1000;

export class SlackDirectory {
  private readonly cache = new Map<string, { person: Promise<SlackPerson>; until: number }>();

  constructor(
    private readonly client: WebClient,
    private readonly log: Logger,
  ) {}

  person(id: string): Promise<SlackPerson> {
    const hit = this.cache.get(id);
    if (hit && hit.until > Date.now()) return hit.person;
    const entry = { person: this.lookup(id), until: Date.now() + TTL_MS };
    this.cache.set(id, entry);
    // A failed lookup is asked again soon rather than remembered.
    void entry.person.then((p) => {
      if (!p.known) entry.until = Date.now() + FAILED_TTL_MS;
    });
    return entry.person;
  }

  private async lookup(id: string): Promise<SlackPerson> {
    try {
      const { user } = await this.client.users.info({ user: id });
      if (!user) throw new Error('users.info returned no user');
      const name = user.profile?.display_name?.trim() || user.real_name?.trim() || user.profile?.real_name?.trim() || user.name || id;
      return { id, name, isAdmin: user.is_admin === true || user.is_owner === true || user.is_primary_owner === true, isBot: user.is_bot === true, known: true };
    } catch (err) {
      this.log.warn({ user: id, err: (err as Error).message }, 'slack users.info failed');
      return { id, name: id, isAdmin: false, isBot: false, known: false };
    }
  }
}
