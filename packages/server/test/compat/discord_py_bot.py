"""discord.py (the OS package) as a bot against Hearth, driven by discord-py.test.ts.

Prints one JSON line per milestone on stdout: ready, resumed, application_info. The test closes the
session from the server after `ready`; discord.py must resume and then survive a 429 by retrying.
"""

import asyncio
import json
import logging
import os

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

URL = os.environ['HEARTH_URL']
TOKEN = os.environ['HEARTH_BOT_TOKEN']
CONCURRENT_REQUESTS = int(os.environ.get('HEARTH_CONCURRENT_REQUESTS', '6'))

# Only the base URL changes; everything else is the library as shipped.
Route.BASE = f'{URL}/api/v10'


def say(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)


class RateLimitWarnings(logging.Handler):
    """Counts discord.py's own 'being rate limited' warnings: each is a 429 it chose to retry."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if 'We are being rate limited' in record.getMessage():
            self.count += 1


warnings = RateLimitWarnings()
logging.getLogger('discord.http').addHandler(warnings)


class Bot(discord.Client):
    async def setup_hook(self):
        # discord.py 2.2 opens its first connection at DEFAULT_GATEWAY instead of asking; ask as other clients do.
        data = await self.http.request(Route('GET', '/gateway/bot'))
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(data['url'])

    async def on_ready(self):
        say('ready', user_id=str(self.user.id), application_id=str(self.application_id))

    async def on_resumed(self):
        say('resumed')
        infos = await asyncio.gather(*(self.application_info() for _ in range(CONCURRENT_REQUESTS)))
        say(
            'application_info',
            ids=sorted({str(info.id) for info in infos}),
            owner_ids=sorted({str(info.owner.id) for info in infos}),
            answered=len(infos),
            rate_limited=warnings.count,
        )
        await self.close()


Bot(intents=discord.Intents.none()).run(TOKEN, log_handler=None)
