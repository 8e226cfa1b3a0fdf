/**
 * `/skills`, `/skill <name>`, `/skilledit <name>` and `/retire <name>` on Telegram: the owner's view
 * of the assistant's approved skills (docs/SKILLS-AND-GRAPH.md), as on the CLI and REST. Only the
 * owner (an `AIVYX_OWNER_IDS` entry `telegram:<user id>`), only in a private chat: a skill's steps
 * are the owner's procedures. Who asks is the verified update's user, never the text. An edit stores
 * nothing here: the new version waits at the gate a proposal waits at, so the approval binds its text.
 */
import { Composer, type Context } from 'grammy';
import { AivyxError } from '../../core/errors.js';
import type { OwnerSkillsPort } from '../ports.js';
import { TELEGRAM_CHANNEL_NAME } from './inbound.js';
import { parseSkillEdit, SKILL_EDIT_FORMAT } from './skill-edit-text.js';

export interface SkillCommandDeps {
  skills?: OwnerSkillsPort;
  /** The owner's identities (`<channel>:<sender>`, AIVYX_OWNER_IDS). */
  owners: readonly string[];
}

/** Telegram's message limit, less room for the last line. */
const MAX_REPLY = 4000;

/** Why a person may not use these commands here, or undefined when they may. */
function refusal(ctx: Context, deps: SkillCommandDeps): string | undefined {
  if (!deps.skills) return 'Skills are not available on this bot.';
  if (ctx.chat?.type !== 'private') return 'Ask me about skills in a private chat.';
  if (!ctx.from || !deps.owners.includes(`${TELEGRAM_CHANNEL_NAME}:${ctx.from.id}`)) return 'Only the owner manages skills.';
  return undefined;
}

/** A skill's name from the command's text, or undefined. */
const nameOf = (ctx: Context): string | undefined => (typeof ctx.match === 'string' ? ctx.match.trim() : '') || undefined;

/** An AivyxError in words for the chat (a refusal of a name, a missing skill); anything else is rethrown. */
function said(e: unknown): string {
  if (e instanceof AivyxError) return `${e.message}${e.hint ? ` (${e.hint})` : ''}`;
  throw e;
}

export function skillsComposer(deps: SkillCommandDeps): Composer<Context> {
  const composer = new Composer<Context>();
  composer.command('skills', async (ctx) => {
    const no = refusal(ctx, deps);
    if (no) return void (await ctx.reply(no));
    const list = await deps.skills!.list().catch(said);
    if (typeof list === 'string') return void (await ctx.reply(list));
    if (list.length === 0) return void (await ctx.reply('No approved skills yet.'));
    const lines = list.map((s) => `• ${s.name} (v${s.version}) — ${s.summary}${s.untrusted ? ` [from: ${s.untrusted}]` : ''}`);
    await ctx.reply(
      ['Approved skills (/skill <name> shows one, /skilledit <name> changes it, /retire <name> retires it):', ...lines]
        .join('\n')
        .slice(0, MAX_REPLY),
    );
  });
  composer.command('skill', async (ctx) => {
    const no = refusal(ctx, deps);
    if (no) return void (await ctx.reply(no));
    const name = nameOf(ctx);
    if (!name) return void (await ctx.reply('Which one? /skill <name> (see /skills)'));
    const skill = await deps.skills!.show(name).catch(said);
    if (typeof skill === 'string') return void (await ctx.reply(skill));
    const text = [
      `${skill.name} v${skill.version}: ${skill.summary}`,
      `When: ${skill.whenToUse}`,
      ...skill.steps.map((s, i) => `${i + 1}. ${s}`),
      `Tools it expects (it grants none): ${skill.tools.join(', ') || 'none'}`,
      ...(skill.untrusted ? [`Proposed after untrusted content: ${skill.untrusted}`] : []),
    ];
    await ctx.reply(text.join('\n').slice(0, MAX_REPLY));
  });
  composer.command('skilledit', async (ctx) => {
    const no = refusal(ctx, deps);
    if (no) return void (await ctx.reply(no));
    // `/skilledit NAME` then, on the next lines, the parts to change (the shape /skill shows).
    const [, name = '', body = ''] = /^(\S*)([\s\S]*)$/.exec(typeof ctx.match === 'string' ? ctx.match.trim() : '') ?? [];
    if (!name) return void (await ctx.reply(`Which one? /skilledit <name>\n${SKILL_EDIT_FORMAT}`));
    const parsed = parseSkillEdit(body);
    if ('problem' in parsed) return void (await ctx.reply(`${parsed.problem}\n${SKILL_EDIT_FORMAT}`));
    const by = { identity: String(ctx.from!.id), channel: TELEGRAM_CHANNEL_NAME };
    // Keyed by the message, like a turn: a redelivered update opens the same gate, once.
    const key = ctx.msg?.message_id === undefined ? undefined : `${ctx.chat!.id}_${ctx.msg.message_id}`;
    const opened = await deps.skills!.edit(name, parsed.changes, by, key).catch(said);
    if (typeof opened === 'string') return void (await ctx.reply(opened));
    await ctx.reply(
      `Version ${opened.version} of ${opened.name} waits for approval: the request shows the whole skill. Nothing changes until an owner approves it.`,
    );
  });
  composer.command('retire', async (ctx) => {
    const no = refusal(ctx, deps);
    if (no) return void (await ctx.reply(no));
    const name = nameOf(ctx);
    if (!name) return void (await ctx.reply('Which one? /retire <name> (see /skills)'));
    const done = await deps.skills!.retire(name, { identity: String(ctx.from!.id), channel: TELEGRAM_CHANNEL_NAME }).catch(said);
    if (typeof done === 'string') return void (await ctx.reply(done));
    await ctx.reply(done.retired === 0 ? `No approved skill named "${name}".` : `Retired ${name} (${done.retired} version(s)).`);
  });
  return composer;
}
