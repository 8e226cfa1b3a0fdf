/**
 * The app's style sheet and its one script, served from this origin (the CSP allows nothing else):
 * no framework and no build step. The script streams a turn from POST /api/v1/messages (fetch
 * reads the server-sent events: EventSource cannot POST nor send the CSRF header), shows an
 * escalated call's gate with Approve and Deny, follows an approved call's re-run, and keeps the
 * approvals, inbox and missions pages current. Everything from the server is set as text
 * (`textContent`), never parsed as HTML, except the server's own escaped page fragments.
 */

/** /app.css */
export const APP_CSS = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fafafa;--muted:#5b6470;--line:#d6dae0;--accent:#2357c6;--good:#1d7a3a;--bad:#b3261e}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--bg:#16181c;--muted:#a0a8b4;--line:#3a3f47;--accent:#8ab4f8;--good:#81c995;--bad:#f28b82}}
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;gap:1.5em;align-items:center;padding:.6em 1.2em;border-bottom:1px solid var(--line)}
header ul{display:flex;gap:1em;list-style:none;margin:0;padding:0}.brand{font-weight:700}
a{color:var(--accent)}a[aria-current=page]{font-weight:700;text-decoration:none}
main{padding:1em 1.5em;max-width:72em}main.narrow{max-width:40em;margin:3em auto}
.skip{position:absolute;left:-999px}.skip:focus{left:1em;top:1em;background:var(--bg);padding:.3em}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
button{font:inherit;padding:.35em .9em;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--bg);cursor:pointer}
button.quiet{background:transparent;color:var(--accent)}button:disabled{opacity:.5;cursor:default}
#signout{margin-left:auto}
input,textarea{font:inherit;padding:.35em;border:1px solid var(--line);border-radius:6px;background:transparent;color:inherit}
textarea{width:100%}.row{display:flex;gap:.6em;align-items:center;flex-wrap:wrap;margin-bottom:1em}
.columns{display:grid;grid-template-columns:16em 1fr;gap:1.5em}.side ul{padding-left:1em}
#log,.rerun{list-style:none;padding:0;margin:0 0 1em}#log>li,.rerun>li{padding:.5em .8em;border:1px solid var(--line);border-radius:8px;margin:.5em 0}
#log .you{background:color-mix(in srgb,var(--accent) 10%,transparent)}.events{color:var(--muted);font-size:.9em;margin:.3em 0 0;padding-left:1.2em}
.reply{white-space:pre-wrap}.files{list-style:none;padding:0}.files img{display:block;max-width:min(100%,32em);max-height:24em}
.gate{border:2px solid var(--accent);border-radius:8px;padding:.6em 1em;margin:1em 0}.gate h3{margin:.2em 0}
pre{white-space:pre-wrap;word-break:break-word;background:color-mix(in srgb,var(--fg) 6%,transparent);padding:.6em;border-radius:6px}
.meta,small,.empty{color:var(--muted)}.good{color:var(--good)}.bad,.error{color:var(--bad)}
.cards{list-style:none;padding:0}.cards li{border:1px solid var(--line);border-radius:8px;padding:.5em .8em;margin:.5em 0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3em .5em;border-bottom:1px solid var(--line);vertical-align:top}
caption{text-align:left;font-weight:600;padding:.4em 0}.facts dt{font-weight:600}.facts dd{margin:0 0 .4em}
`;

/** /app.js */
export const APP_JS = `'use strict';
(() => {
  const csrf = document.querySelector('meta[name=csrf-token]')?.content ?? '';
  const $ = (sel, root = document) => root.querySelector(sel);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  const notice = (text, isError) => { const n = $('#notice'); if (n) { n.textContent = text; n.className = isError ? 'error' : ''; } };

  /** A state-changing call: same origin, with the session's CSRF token. */
  async function post(path, body) {
    const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body ?? {}) });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) { const e = new Error(data.error?.message ?? ('HTTP ' + res.status)); e.status = res.status; e.hint = data.error?.hint; throw e; }
    return data;
  }
  const getJson = async (path) => { const r = await fetch(path); const d = await r.json().catch(() => ({})); if (!r.ok) { const e = new Error(d.error?.message ?? ('HTTP ' + r.status)); e.status = r.status; throw e; } return d; };

  /** Reads server-sent events from a fetch response, calling on(event, data) for each. */
  async function readEvents(res, on) {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf('\\n\\n')) >= 0) {
        const block = buf.slice(0, cut); buf = buf.slice(cut + 2);
        let event = 'message', data = '';
        for (const line of block.split('\\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trimStart();
        }
        if (data) { try { on(event, JSON.parse(data)); } catch { /* not ours */ } }
      }
    }
  }

  /** A turn's files: raster images shown, everything else offered as a download (names set as text). */
  function filesView(files) {
    const list = el('ul', 'files'); list.setAttribute('aria-label', 'Attachments');
    const image = /^image\\/(png|jpeg|gif|webp)$/;
    for (const f of files) {
      const href = '/app/attachments/' + encodeURIComponent(f.id) + '?session=' + encodeURIComponent(f.session);
      const item = el('li'); item.dataset.attachment = f.id;
      if (image.test(f.mime)) { const img = el('img'); img.src = href; img.alt = f.name; item.append(img); }
      const a = el('a', null, f.name); a.href = href; a.setAttribute('download', f.name);
      item.append(a, el('small', null, ' ' + f.mime.split(';')[0] + ', ' + f.size + ' bytes'));
      list.append(item);
    }
    return list;
  }

  /** One assistant entry in the conversation: streamed text, events, the outcome. */
  function turnView(log) {
    const li = el('li', 'assistant'); const reply = el('div', 'reply'); const events = el('ul', 'events');
    li.append(el('strong', null, 'aivyx'), reply, events); log.append(li);
    const line = (t, cls) => events.append(el('li', cls, t));
    return {
      li,
      handle(event, d) {
        if (event === 'turn') li.dataset.turn = d.turnWorkflowId;
        else if (event === 'text') reply.textContent += d.text;
        else if (event === 'step_restarted') reply.textContent = '';
        else if (event === 'status') line('status: ' + d.text);
        else if (event === 'tool_started') line('tool started: ' + d.tool);
        else if (event === 'tool_finished') line('tool finished: ' + d.tool + ' — ' + d.summary);
        else if (event === 'attachment') line('attached: ' + d.attachment.name);
        else if (event === 'error') line('error: ' + d.message, 'error');
        else if (event === 'outcome') {
          li.dataset.outcome = d.status;
          if (d.status === 'Completed') { reply.textContent = d.finalMessage; if (d.attachments) li.append(filesView(d.attachments)); }
          else if (d.status === 'Escalated') line('needs approval: ' + d.pendingTool + ' — ' + d.reason);
          else line(d.status + (d.error ? ': ' + d.error.message : ''), 'error');
        }
      },
    };
  }

  /** Streams one turn (a new message, or following a turn already running) into the log. */
  async function stream(log, res) {
    const view = turnView(log);
    let outcome;
    await readEvents(res, (event, d) => { view.handle(event, d); if (event === 'outcome') outcome = d; });
    if (outcome?.status === 'Escalated' && view.li.dataset.turn) await showGateOf(view.li, view.li.dataset.turn);
    return outcome;
  }

  /** The approval card of an escalated turn, built from the gate the server reports (text only). */
  async function showGateOf(li, turn) {
    const g = await getJson('/app/turn-gate?turn=' + encodeURIComponent(turn)).catch((e) => ({ error: e.message }));
    if (!g.gate) { li.append(el('p', 'error', g.error ?? 'no gate is waiting for you for this call')); return; }
    const card = el('article', 'gate'); card.dataset.gate = g.gate.gateId; card.dataset.mission = g.missionId; card.dataset.rerun = g.rerun;
    card.setAttribute('aria-label', 'Approval: ' + g.gate.tool);
    card.append(el('h3', null, g.gate.tool), el('p', null, 'This exact call runs if you approve:'), el('pre', 'call', (g.gate.call ?? []).join('\\n')));
    if (g.gate.why) card.append(el('p', null, 'Why it needs approval: ' + g.gate.why));
    if (g.gate.askedBy) card.append(el('p', null, 'Asked by ' + g.gate.askedBy.identity + ' on ' + g.gate.askedBy.channel));
    card.append(el('p', 'state', 'waiting for you'));
    const actions = el('div', 'actions');
    const a = el('button', null, 'Approve'); a.type = 'button'; a.dataset.decide = 'approve';
    const d = el('button', 'quiet', 'Deny'); d.type = 'button'; d.dataset.decide = 'deny';
    actions.append(a, ' ', d); card.append(actions, el('div', 'after'));
    li.append(card);
    a.focus();
  }

  /** Approve or Deny pressed on a gate card: the decision goes to the REST channel's gate endpoint. */
  async function decide(card, kind) {
    const buttons = card.querySelectorAll('button[data-decide]');
    buttons.forEach((b) => (b.disabled = true));
    const state = $('.state', card); const after = $('.after', card);
    try {
      const r = await post('/api/v1/gates/' + kind, { gateId: card.dataset.gate, missionId: card.dataset.mission, ...(kind === 'deny' ? { reason: 'denied in the app' } : {}) });
      state.textContent = 'decided: ' + r.state; state.dataset.state = r.state;
      if (kind === 'deny') { after.append(el('p', null, 'Denied: nothing ran.')); return; }
      after.append(el('p', null, 'Approved; running it now.'));
      if (card.dataset.rerun) await follow(after, card.dataset.rerun);
      else await missionSettles(after, card.dataset.mission);
    } catch (e) {
      const stale = e.status === 409 || e.status === 404;
      state.textContent = stale ? 'already decided' : 'error'; state.dataset.state = stale ? 'stale' : 'error';
      after.append(el('p', 'error', stale
        ? 'This gate was already decided or closed elsewhere (' + e.message + '). Your click changed nothing and ran nothing.'
        : 'The decision failed: ' + e.message));
    }
  }

  /** Follows the re-run of an approved call until it ends (it may take a moment to start). */
  async function follow(box, turn) {
    const log = el('ol', 'rerun'); box.append(log);
    for (let i = 0; i < 60; i++) {
      const res = await fetch('/api/v1/turns/' + turn.split('/').map(encodeURIComponent).join('/') + '/events');
      if (res.ok) return stream(log, res);
      if (res.status !== 404) { box.append(el('p', 'error', 'cannot follow the call: HTTP ' + res.status)); return; }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** A mission that went on after an approval: says where it got to once it leaves its gate. */
  async function missionSettles(box, missionId) {
    const line = el('p', null, ''); box.append(line);
    for (let i = 0; i < 60; i++) {
      const m = await getJson('/api/v1/missions/' + encodeURIComponent(missionId)).catch(() => undefined);
      if (m) line.textContent = 'mission ' + m.state + (m.waiting ? ', waiting for ' + m.waiting : '');
      if (m && m.gate?.state !== 'approved' && m.state !== 'running') return;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  function chatPage(form) {
    const log = $('#log'); const text = $('#chat-text');
    text.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const message = text.value.trim(); if (!message) return;
      text.value = '';
      const you = el('li', 'you'); you.append(el('strong', null, 'you'), el('div', 'reply', message)); log.append(you);
      const res = await fetch('/api/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify({ text: message, sessionId: form.dataset.session, channel: 'rest' }) });
      if (!res.ok) { const d = await res.json().catch(() => ({})); log.append(el('li', 'error', d.error?.message ?? ('HTTP ' + res.status))); return; }
      await stream(log, res);
    });
  }

  /** Keeps a page's live part current; approval cards that left the list are marked decided, not dropped. */
  function refresh(live) {
    setInterval(async () => {
      const res = await fetch(location.pathname + '?part=live').catch(() => undefined);
      if (!res?.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = doc.getElementById('live'); if (!fresh) return;
      if (live.dataset.refresh !== 'approvals') { live.replaceChildren(...fresh.childNodes); return; }
      const now = new Set([...fresh.querySelectorAll('[data-gate]')].map((c) => c.dataset.gate));
      for (const card of fresh.querySelectorAll('[data-gate]'))
        if (![...live.querySelectorAll('[data-gate]')].some((c) => c.dataset.gate === card.dataset.gate)) live.append(card);
      for (const card of live.querySelectorAll('[data-gate]')) {
        const state = $('.state', card);
        if (now.has(card.dataset.gate) || state.dataset.state !== 'open') continue;
        const m = await getJson('/api/v1/missions/' + encodeURIComponent(card.dataset.mission)).catch(() => undefined);
        const decided = m?.gate && m.gate.gateId === card.dataset.gate ? m.gate.state : 'closed';
        state.textContent = 'decided elsewhere: ' + decided + (m ? ' (mission ' + m.state + ')' : ''); state.dataset.state = decided;
        card.querySelectorAll('button[data-decide]').forEach((b) => (b.disabled = true));
      }
      const empty = $('.empty', live); if (empty && live.querySelector('[data-gate]')) empty.remove();
    }, 1500);
  }

  document.addEventListener('click', async (e) => {
    const b = e.target.closest('button'); if (!b) return;
    if (b.dataset.decide) return decide(b.closest('[data-gate]'), b.dataset.decide);
    if (b.dataset.post) {
      b.disabled = true;
      try { await post(b.dataset.post); notice('Done.'); b.closest('li,tr')?.remove(); } catch (err) { notice(err.message, true); b.disabled = false; }
    }
    if (b.id === 'signout') { await post('/signout').catch(() => undefined); location.href = '/'; }
  });

  addEventListener('DOMContentLoaded', () => {
    const form = $('#chat-form'); if (form) chatPage(form);
    const live = $('#live[data-refresh]'); if (live) refresh(live);
    const rem = $('#reminder-form');
    if (rem) rem.addEventListener('submit', async (e) => {
      e.preventDefault();
      try { const r = await post('/app/reminders', { when: rem.when.value, text: rem.text.value }); notice('Reminder set: ' + r.missionId); rem.reset(); }
      catch (err) { notice(err.message + (err.hint ? ' — ' + err.hint : ''), true); }
    });
  });
})();
`;
