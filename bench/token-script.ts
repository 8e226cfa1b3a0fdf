/**
 * The scripted conversation of `npm run bench -- --tokens`: 20 turns a Trusted CLI session might
 * have in a day, with the tool calls the model makes and what the tools return (sizes like real
 * ones: a notes file, a directory listing, a recall of notes).
 */

/** One turn: what the person writes, the calls the model makes (one step each) and its answer. */
export interface ScriptedTurn {
  user: string;
  calls?: Array<{ tool: string; input: unknown; output: unknown }>;
  reply: string;
}

const lines = (n: number, make: (i: number) => string): string => Array.from({ length: n }, (_, i) => make(i)).join('\n');

const todo = lines(
  30,
  (i) =>
    `- [${i % 3 === 0 ? 'x' : ' '}] ${['Call the dentist', 'Renew the car insurance', 'Send the invoice to ACME', 'Book train to Lyon', 'Fix the garden gate'][i % 5]} (due 2026-12-${String(7 + (i % 20)).padStart(2, '0')})`,
);
const listing = lines(
  24,
  (i) => `-rw-r--r-- 1 me me ${1000 + i * 137} Dec  ${1 + (i % 5)} 10:${String(i).padStart(2, '0')} report-${i}.md`,
);
const notes = Array.from({ length: 6 }, (_, i) => ({
  id: `m_${String(i).padStart(32, 'a')}`,
  at: 1796083200000 + i * 86400000,
  text: `Note ${i}: the plumber said the boiler needs a new valve; quote ${120 + i * 5} EUR, valid until January.`,
}));
const reply = (s: string): string => `${s} ${'Let me know if you want me to do anything else with it.'}`;

/** The 20 turns. */
export const TOKEN_SCRIPT: ScriptedTurn[] = [
  { user: 'What is the capital of France?', reply: 'Paris.' },
  {
    user: 'Read /home/me/notes/todo.md and tell me what is due this week.',
    calls: [
      {
        tool: 'fs.read',
        input: { path: '/home/me/notes/todo.md' },
        output: { path: '/home/me/notes/todo.md', content: todo, bytes: todo.length, truncated: false },
      },
    ],
    reply: reply(
      'Due this week: call the dentist (7 Dec), renew the car insurance (8 Dec), send the invoice to ACME (9 Dec) and book the train to Lyon (10 Dec). The garden gate can wait until the 11th.',
    ),
  },
  {
    user: 'Remind me tomorrow at 9 to call the dentist.',
    calls: [
      {
        tool: 'mission.create',
        input: {
          goal: 'Remind the owner to call the dentist',
          steps: [{ waitUntil: '2026-12-06T09:00', timeZone: 'Europe/Berlin' }, { notify: 'Call the dentist.' }],
        },
        output: { missionId: 'mission-3f2a9c' },
      },
    ],
    reply: 'I have asked for your approval of a reminder tomorrow at 09:00 to call the dentist.',
  },
  {
    user: "Remember that my sister's birthday is on 14 March.",
    calls: [
      {
        tool: 'memory.write',
        input: { text: "Sister's birthday: 14 March", topic: 'family' },
        output: { id: 'm_0123456789abcdef0123456789abcdef', at: 1796083200000 },
      },
    ],
    reply: "Noted: your sister's birthday is on 14 March.",
  },
  {
    user: "What's in /home/me/reports?",
    calls: [
      {
        tool: 'shell.exec',
        input: { argv: ['ls', '-l', '/home/me/reports'] },
        output: { exitCode: 0, stdout: listing, stderr: '', timedOut: false },
      },
    ],
    reply: reply('24 reports, report-0.md to report-23.md, written between 1 and 5 December; the largest is report-23.md at about 4 KB.'),
  },
  { user: 'Which of them is the newest?', reply: 'report-23.md (5 December, 10:23).' },
  {
    user: 'What did the plumber say about the boiler?',
    calls: [{ tool: 'memory.recall', input: { query: 'plumber boiler' }, output: { entries: notes, more: false } }],
    reply: reply('The plumber said the boiler needs a new valve; the quotes went from 120 to 145 EUR and are valid until January.'),
  },
  {
    user: 'How big is /home/me/notes/todo.md?',
    calls: [
      {
        tool: 'fs.metadata',
        input: { path: '/home/me/notes/todo.md' },
        output: { exists: true, type: 'file', size: todo.length, mode: '0644', mtime: '2026-12-05T08:00:00Z' },
      },
    ],
    reply: `It is ${todo.length} bytes, last changed this morning.`,
  },
  {
    user: 'Add "Buy a valve for the boiler" to my todo list.',
    calls: [
      {
        tool: 'fs.write',
        input: { path: '/home/me/notes/todo.md', content: `${todo}\n- [ ] Buy a valve for the boiler` },
        output: { path: '/home/me/notes/todo.md', bytes: todo.length + 32, verified: true },
      },
    ],
    reply: 'Added "Buy a valve for the boiler" at the end of your todo list.',
  },
  {
    user: 'Which missions do I have?',
    calls: [
      {
        tool: 'mission.list',
        input: {},
        output: {
          missions: [{ id: 'mission-3f2a9c', goal: 'Remind the owner to call the dentist', state: 'waiting', waitingFor: 'approval' }],
        },
      },
    ],
    reply: 'One: the dentist reminder, waiting for your approval.',
  },
  { user: 'Translate "the boiler needs a new valve" into German.', reply: '„Der Heizkessel braucht ein neues Ventil.“' },
  { user: 'And into French?', reply: '« La chaudière a besoin d’une nouvelle vanne. »' },
  {
    user: 'What model are you configured with?',
    calls: [{ tool: 'config.read', input: { key: 'llm.model' }, output: { key: 'llm.model', value: 'claude-sonnet-4-5' } }],
    reply: 'claude-sonnet-4-5.',
  },
  {
    user: 'Show me what you did today.',
    calls: [
      {
        tool: 'audit.read',
        input: { limit: 10 },
        output: {
          entries: Array.from({ length: 10 }, (_, i) => ({
            seq: 100 + i,
            type: i % 2 ? 'ToolCall' : 'TurnStarted',
            turnId: `turn/cli/s1/${i}`,
            recordedAt: '2026-12-05T09:00:00Z',
            event: { tool: 'fs.read' },
          })),
          truncated: false,
        },
      },
    ],
    reply: reply(
      'Today I read your todo list, checked the reports folder, recalled your plumber notes, wrote the todo list once and read the configuration.',
    ),
  },
  {
    user: 'Cancel the dentist reminder, I called already.',
    calls: [{ tool: 'mission.cancel', input: { missionId: 'mission-3f2a9c', reason: 'called already' }, output: { cancelled: true } }],
    reply: 'Cancelled the dentist reminder.',
  },
  {
    user: 'Forget the plumber notes, the boiler is fixed.',
    calls: [{ tool: 'memory.forget', input: { topic: 'plumber' }, output: { forgotten: 6 } }],
    reply: 'Forgot the six plumber notes.',
  },
  {
    user: 'Summarise report-23.md for me.',
    calls: [
      {
        tool: 'fs.read',
        input: { path: '/home/me/reports/report-23.md' },
        output: {
          path: '/home/me/reports/report-23.md',
          content: lines(
            40,
            (i) => `Section ${i}: revenue grew ${i % 7}% in region ${i % 4}; costs stayed flat; next review in Q${1 + (i % 4)}.`,
          ),
          truncated: false,
        },
      },
    ],
    reply: reply('Revenue grew in every region (up to 6%), costs stayed flat, and the reviews are spread over the four quarters.'),
  },
  { user: 'Which region grew most?', reply: 'Regions 2 and 3 reached 6% growth in several sections; region 0 grew least.' },
  {
    user: 'Thanks. What is on my list for tomorrow?',
    reply: 'Tomorrow (6 December): nothing is due; the dentist call is done and the insurance is due on the 8th.',
  },
  { user: 'Good night.', reply: 'Good night!' },
];
