/**
 * The app's pages, rendered on the server with hono/html: every value goes through its escaping,
 * so text from a message, a tool's output or a file name reaches the browser as text. Each page
 * has a `live` part that the page script fetches again to stay current (`?part=live`).
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { HeldReply } from '../../activities/ports.js';
import type { MemoryEntry } from '../../activities/tools/memory-port.js';
import type { MissionStatus } from '../../workflows/mission-messages.js';
import type { MissionSummary, ScheduleRow, SessionSummary } from '../ports.js';

/** A fragment of escaped HTML (what hono/html's `html` yields). */
export type Fragment = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The pages in the navigation, in order: path and label. */
const NAV: ReadonlyArray<[string, string]> = [
  ['/', 'Chat'],
  ['/approvals', 'Approvals'],
  ['/inbox', 'Inbox'],
  ['/missions', 'Missions'],
  ['/memory', 'Memory'],
  ['/audit', 'Audit'],
];

/** The whole page around `body`: navigation, the CSRF token for the script, no inline script or style. */
export function layout(opts: { title: string; path: string; csrf: string; body: Fragment }): Fragment {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content="${opts.csrf}" />
        <title>${opts.title} · aivyx</title>
        <link rel="stylesheet" href="/app.css" />
        <script src="/app.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <span class="brand">aivyx</span>
          <nav aria-label="Pages">
            <ul>
              ${NAV.map(
                ([href, label]) => html`<li><a href="${href}" ${opts.path === href ? raw(' aria-current="page"') : ''}>${label}</a></li>`,
              )}
            </ul>
          </nav>
          <button type="button" id="signout" class="quiet">Sign out</button>
        </header>
        <main id="main" tabindex="-1">
          <h1>${opts.title}</h1>
          <p id="notice" role="status" aria-live="polite"></p>
          ${opts.body}
        </main>
      </body>
    </html>`;
}

/** A page for someone without a session (401), or with a link that no longer works. */
export function signedOutPage(message: string): Fragment {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>Sign in · aivyx</title>
        <link rel="stylesheet" href="/app.css" />
      </head>
      <body>
        <main id="main" class="narrow">
          <h1>Sign in to aivyx</h1>
          <p role="alert">${message}</p>
          <p>Run <code>aivyx app</code> on this machine: it prints a sign-in link that works once.</p>
        </main>
      </body>
    </html>`;
}

/** The sign-in page a link opens: one button, so a link preview or prefetch never uses the link up. */
export function signInPage(code: string): Fragment {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>Sign in · aivyx</title>
        <link rel="stylesheet" href="/app.css" />
      </head>
      <body>
        <main id="main" class="narrow">
          <h1>Sign in to aivyx</h1>
          <p>This link signs this browser in to your assistant on this machine for 12 hours. It works once.</p>
          <form method="post" action="/signin">
            <input type="hidden" name="code" value="${code}" /><button type="submit" id="signin">Sign in</button>
          </form>
        </main>
      </body>
    </html>`;
}

/** The chat page: the open sessions, the conversation (filled by the script as turns stream), the message box. */
export function chatBody(sessionId: string, sessions: SessionSummary[]): Fragment {
  return html`<div class="columns">
    <section aria-labelledby="sessions-h" class="side">
      <h2 id="sessions-h">Conversations</h2>
      <ul>
        ${sessions.map((s) => {
          const own = /^session\/rest\/(.+)$/.exec(s.sessionWorkflowId)?.[1];
          return html`<li>
            ${own ? html`<a href="/?session=${encodeURIComponent(own)}">${own}</a>` : s.sessionWorkflowId} <small>${s.startTime}</small>
          </li>`;
        })}
      </ul>
      <p><a href="/?session=new">New conversation</a></p>
    </section>
    <section aria-labelledby="conv-h" class="main-col">
      <h2 id="conv-h" class="sr-only">Conversation ${sessionId}</h2>
      <ol id="log" role="log" aria-live="polite" aria-label="Conversation"></ol>
      <form id="chat-form" data-session="${sessionId}">
        <label for="chat-text">Message</label>
        <textarea id="chat-text" name="text" rows="3" required></textarea>
        <button type="submit">Send</button>
      </form>
    </section>
  </div>`;
}

/** One gate waiting for a decision: the exact call, why, who asked where, and the two buttons. */
export function gateCard(missionId: string, gate: NonNullable<MissionStatus['gate']>, rerun?: string): Fragment {
  const label = `${gate.tool} in mission ${missionId}`;
  return html`<article
    class="gate"
    data-gate="${gate.gateId}"
    data-mission="${missionId}"
    ${rerun ? html` data-rerun="${rerun}"` : ''}
    aria-label="Approval: ${label}"
  >
    <h3>${gate.tool}</h3>
    <p class="meta">mission <a href="/missions/${encodeURIComponent(missionId)}">${missionId}</a>, gate ${gate.gateId}</p>
    <p>This exact call runs if you approve:</p>
    <pre class="call">${(gate.call ?? [`input digest ${gate.inputHash}`]).join('\n')}</pre>
    ${gate.why ? html`<p><strong>Why it needs approval:</strong> ${gate.why}</p>` : ''}
    ${gate.askedBy ? html`<p>Asked by ${gate.askedBy.identity} on ${gate.askedBy.channel}</p>` : ''}
    <p>Approvers: ${gate.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ')}</p>
    <p class="state" data-state="${gate.state}">${gate.state === 'open' ? 'waiting for you' : `decided: ${gate.state}`}</p>
    <div class="actions">
      <button type="button" data-decide="approve" ${gate.state === 'open' ? '' : raw(' disabled')}>Approve</button>
      <button type="button" data-decide="deny" class="quiet" ${gate.state === 'open' ? '' : raw(' disabled')}>Deny</button>
    </div>
    <div class="after" aria-live="polite"></div>
  </article>`;
}

/** The approvals page's live part: every gate waiting for the owner. */
export function approvalsLive(gates: Array<{ missionId: string; gate: NonNullable<MissionStatus['gate']>; rerun?: string }>): Fragment {
  return html`<div id="live" data-refresh="approvals">
    ${
      gates.length === 0 ? html`<p class="empty">Nothing is waiting for your approval.</p>` : ''
    }${gates.map((g) => gateCard(g.missionId, g.gate, g.rerun))}
  </div>`;
}

/** What a held reply says, in one text. */
function replyText(r: HeldReply): string {
  const o = r.outcome;
  return o.status === 'Completed' ? o.finalMessage : o.status === 'Escalated' ? `waiting for approval: ${o.pendingTool}` : o.status;
}

/** The inbox's live part: notices and replies held for the owner, newest first. */
export function inboxLive(replies: HeldReply[]): Fragment {
  const newest = [...replies].reverse();
  return html`<div id="live" data-refresh="inbox">
    ${newest.length === 0 ? html`<p class="empty">Your inbox is empty.</p>` : ''}
    <ul class="cards">
      ${newest.map(
        (r) =>
          html`<li class="held" data-id="${r.id}">
            <p class="text">${replyText(r)}</p>
            <p class="meta">${new Date(r.at).toISOString()} · for ${r.channel} · ${r.reason}</p>
            <button type="button" data-post="/api/v1/inbox/${r.id}/dismiss" class="quiet">Dismiss</button>
          </li>`,
      )}
    </ul>
  </div>`;
}

/** The missions page: a one-line reminder, the missions, the recurring ones. */
export function missionsBody(missions: MissionSummary[], schedules: ScheduleRow[]): Fragment {
  return html`<form id="reminder-form" class="row" aria-label="New reminder">
      <label for="rem-when">When</label><input id="rem-when" name="when" placeholder="in 2h, or tomorrow 9:00" required />
      <label for="rem-text">Remind me to</label><input id="rem-text" name="text" required /> <button type="submit">Create reminder</button>
    </form>
    <div id="live" data-refresh="missions">
      <table>
        <caption>
          Missions, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Mission</th>
            <th scope="col">State</th>
            <th scope="col">Waits for</th>
            <th scope="col">Started</th>
            <th scope="col"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${missions.map(
            (m) =>
              html`<tr>
                <td><a href="/missions/${encodeURIComponent(m.missionId)}">${m.missionId}</a></td>
                <td>${m.state ?? m.status.toLowerCase()}</td>
                <td>${m.openGate ? html`<a href="/approvals">gate ${m.openGate}</a>` : ''}</td>
                <td>${m.startTime}</td>
                <td>
                  ${m.status === 'RUNNING' ? html`<button type="button" class="quiet" data-post="/api/v1/missions/${encodeURIComponent(m.missionId)}/cancel">Cancel</button>` : ''}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2>Recurring</h2>
      ${schedules.length === 0 ? html`<p class="empty">No recurring missions.</p>` : ''}
      <ul>
        ${schedules.map(
          (s) =>
            html`<li>
              ${s.scheduleId} — ${s.paused ? 'paused' : `next ${s.next.join(', ')}`}
              <button
                type="button"
                class="quiet"
                data-post="/api/v1/schedules/${encodeURIComponent(s.scheduleId)}/${s.paused ? 'resume' : 'pause'}"
              >
                ${s.paused ? 'Resume' : 'Pause'}
              </button>
            </li>`,
        )}
      </ul>
    </div>`;
}

/** One mission: its status as the mission reports it. */
export function missionBody(status: MissionStatus & { status?: string; steps?: number }): Fragment {
  return html`<dl class="facts">
      <dt>State</dt>
      <dd>${status.state}</dd>
      <dt>Workflow</dt>
      <dd>${status.status ?? ''}</dd>
      <dt>Step</dt>
      <dd>${status.step + 1}${status.steps === undefined ? '' : ` of ${status.steps}`} (${status.stepsRun} run)</dd>
      ${
        status.waiting
          ? html`<dt>Waiting for</dt>
              <dd>${status.waiting}</dd>`
          : ''
      }
    </dl>
    ${status.gate ? gateCard(status.missionId, status.gate) : ''}
    <details>
      <summary>Everything the mission reports</summary>
      <pre>${JSON.stringify(status, null, 2)}</pre>
    </details>`;
}

/** The memory page: what the assistant remembers, each with a Forget button. */
export function memoryBody(entries: MemoryEntry[], more: boolean): Fragment {
  return html`<div id="live">
    <ul class="cards">
      ${entries.map(
        (e) =>
          html`<li>
            <p class="text">${e.text}</p>
            <p class="meta">
              ${e.id} ·
              ${new Date(e.at).toISOString()}${e.topic ? ` · ${e.topic}` : ''}${e.untrusted ? ` · from untrusted ${e.untrusted}` : ''}
            </p>
            <button type="button" class="quiet" data-post="/api/v1/memory/${encodeURIComponent(e.id)}/forget">Forget</button>
          </li>`,
      )}
    </ul>
    ${entries.length === 0 ? html`<p class="empty">Nothing remembered yet.</p>` : ''}${more ? html`<p>More entries exist; <code>aivyx memory list --query …</code> narrows them.</p>` : ''}
  </div>`;
}

/** One audit row as the tail gives it. */
interface TailRow {
  seq: number;
  eventType: string;
  recordedAt: string;
  event: Record<string, unknown>;
}

/** The audit page: the verification (chain, tree, the latest signed checkpoint, the witness) and the newest entries. */
export function auditBody(verify: Record<string, unknown>, tail: TailRow[], pubkey?: { vkey?: string }): Fragment {
  const ok = verify.ok === true;
  const checkpoints = verify.checkpoints as { matched?: number; newest?: { size?: number; source?: string } } | undefined;
  const reconciliation = verify.reconciliation as { findings?: unknown[] } | undefined;
  return html`<section aria-labelledby="verify-h">
      <h2 id="verify-h">Verification</h2>
      <p class="${ok ? 'good' : 'bad'}" data-verified="${String(ok)}">
        ${ok ? `The audit chain verifies: ${String(verify.count)} entries.` : `The audit log does NOT verify: ${String(verify.reason ?? '')}`}
      </p>
      <dl class="facts">
        <dt>Tree root</dt>
        <dd><code>${String(verify.root ?? '')}</code></dd>
        <dt>Latest signed checkpoint</dt>
        <dd>${checkpoints?.newest ? `${String(checkpoints.newest.size)} entries, ${checkpoints.newest.source ?? ''}` : 'none yet'}</dd>
        <dt>Witness</dt>
        <dd>
          ${verify.witness ? `${String(verify.witness)}: ${String(checkpoints?.matched ?? 0)} checkpoints agree with the log` : 'no witness file'}
        </dd>
        <dt>Tool calls reconciled with the log</dt>
        <dd>${reconciliation ? `${reconciliation.findings?.length ?? 0} findings` : 'not checked'}</dd>
        ${
          pubkey?.vkey
            ? html`<dt>Checkpoint verifier key</dt>
                <dd><code>${pubkey.vkey}</code></dd>`
            : ''
        }
      </dl>
      <details>
        <summary>The whole verification report</summary>
        <pre class="proof">${JSON.stringify(verify, null, 2)}</pre>
      </details>
    </section>
    <section aria-labelledby="tail-h">
      <h2 id="tail-h">Newest entries</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">At</th>
            <th scope="col">Event</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          ${[...tail].reverse().map(
            (r) =>
              html`<tr>
                <td>${r.seq}</td>
                <td>${r.recordedAt}</td>
                <td>${r.eventType}</td>
                <td><code>${eventDetail(r.event)}</code></td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>`;
}

/** The fields of an audit event worth a glance (no inputs: the log holds their digests only). */
function eventDetail(e: Record<string, unknown>): string {
  const keys = ['toolId', 'outcome', 'missionId', 'gateId', 'approver', 'approverChannel', 'channel', 'reason'];
  return keys
    .filter((k) => e[k] !== undefined)
    .map((k) => `${k}=${typeof e[k] === 'string' ? e[k] : JSON.stringify(e[k])}`)
    .join(' ')
    .slice(0, 300);
}

/** What a page shows when its data could not be read (the REST channel's error, as text). */
export function errorBody(e: unknown): Fragment {
  const err = e instanceof Error ? e : new Error(String(e));
  const hint = err instanceof Error && 'hint' in err && typeof err.hint === 'string' ? err.hint : undefined;
  return html`<p class="error" role="alert">${err.message}</p>
    ${hint ? html`<p>${hint}</p>` : ''}`;
}
