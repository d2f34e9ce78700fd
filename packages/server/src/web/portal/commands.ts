import { ApplicationCommandTypes } from '@hearth/protocol';
import type { FastifyInstance } from 'fastify';
import type { CommandObject } from '../../domains/commands/objects.js';
import type { AppRequest, PortalContext } from './context.js';
import { html } from './html.js';
import { applicationPage } from './pages.js';

const TYPE_NAMES: Readonly<Record<number, string>> = {
  [ApplicationCommandTypes.ChatInput]: 'Slash command',
  [ApplicationCommandTypes.User]: 'User context menu',
  [ApplicationCommandTypes.Message]: 'Message context menu',
  [ApplicationCommandTypes.PrimaryEntryPoint]: 'Entry point',
};

/** Commands: the application's global commands, read-only (they are registered through the API). */
export function commandsSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard } = ctx;
  app.get('/developers/applications/:application_id/commands', async (request: AppRequest, reply) => {
    const guarded = await guard(request, reply);
    if (!guarded?.application) return reply;
    const application = guarded.application;
    const commands = await ctx.deps.commands.globalCommandsOf(application.id);
    return send(reply, 200, (nonce) =>
      applicationPage(
        { nonce, user: guarded.signed.page },
        application,
        'commands',
        html`<section><h2>Global commands</h2>
<p>Commands are registered with the API (<code>PUT /applications/${application.id}/commands</code>); guild commands are listed per guild there.</p>
${commands.length === 0 ? html`<p id="no-commands">No global commands yet.</p>` : commandTable(commands)}</section>`,
      ),
    );
  });
}

function commandTable(commands: readonly CommandObject[]) {
  const rows = commands.map(
    (command) =>
      html`<tr><td><code>${command.name}</code></td><td>${TYPE_NAMES[command.type] ?? String(command.type)}</td><td>${command.description}</td><td><code>${command.id}</code></td></tr>`,
  );
  return html`<table id="commands"><thead><tr><th>Name</th><th>Type</th><th>Description</th><th>ID</th></tr></thead><tbody>${rows}</tbody></table>`;
}
