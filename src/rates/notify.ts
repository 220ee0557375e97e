// Notification payloads of the original Notifier (docs/notes/rates.md E.3), kept byte-compatible so existing
// Slack and Discord channels render the same. Pure: the notifier actor posts them.

import type { NoticeLevel } from './cycle.js';

const SLACK_COLORS: Record<NoticeLevel, string> = { error: '#FF0000', warn: '#FFFF00', info: '#00FF00' };
const DISCORD_COLORS: Record<NoticeLevel, number> = { error: 16711680, warn: 16776960, info: 65280 };

/** `**<name>**# <message>`: the channel text of every notification. */
export function channelText(name: string, message: string): string {
  return `**${name}**# ${message}`;
}

/** Logs carry the text without markdown emphasis. */
export function plainText(message: string): string {
  return message.replace(/\*\*(.+?)\*\*/g, '$1');
}

export function slackPayload(level: NoticeLevel, text: string): unknown {
  return {
    attachments: [{ fallback: text, color: SLACK_COLORS[level], text: text.replace(/\*\*(.+?)\*\*/g, '*$1*'), mrkdwn_in: ['text'] }],
  };
}

export function discordPayload(level: NoticeLevel, text: string): unknown {
  return { embeds: [{ color: DISCORD_COLORS[level], description: text }] };
}

/**
 * The ADAMANT channel's chat text, `<level>| **<name>**# <message>`: the original calls adamant-api
 * `sendMessage(passphrase, address, "<level>| <msg>")` with `msg` the channel text (notes E.3); it goes out as a
 * basic (chat type 1) encrypted message.
 */
export function adamantText(level: NoticeLevel, text: string): string {
  return `${level}| ${text}`;
}
