/** The starter tool descriptors: scopes per input, and malformed inputs refused before anything runs. */
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { findTool, TOOL_CATALOG, toolSpecs } from '../../core/tool-catalog.js';
import { fsReadTool } from '../../core/tools/fs-read.js';
import { fsWriteTool } from '../../core/tools/fs-write.js';
import { shellExecTool } from '../../core/tools/shell-exec.js';
import { errorKindOf } from '../support/aivyx-failure.js';

describe('tool catalog', () => {
  it('derives the scope of each call from its input', () => {
    expect(fsReadTool.requiredScope({ path: '/home/u/notes.txt' })).toBe('fs.read:/home/u/notes.txt');
    expect(fsReadTool.requiredScope({ path: '/home/u/notes.txt', maxBytes: 10 })).toBe('fs.read:/home/u/notes.txt');
    expect(fsWriteTool.requiredScope({ path: '/tmp/x', content: '' })).toBe('fs.write:/tmp/x');
    expect(fsWriteTool.requiredScope({ path: '/tmp/x', content: 'a', mode: 'create' })).toBe('fs.write:/tmp/x');
    // The command and its leading plain words; from the first other argument on, "*".
    expect(shellExecTool.requiredScope({ argv: ['ls', '-la', '/tmp'] })).toBe('shell.exec:ls -la *');
    expect(shellExecTool.requiredScope({ argv: ['ls', '/tmp'] })).toBe('shell.exec:ls');
    expect(shellExecTool.requiredScope({ argv: ['git', 'status', '--short'] })).toBe('shell.exec:git status --short');
    expect(shellExecTool.requiredScope({ argv: ['curl', '-H', 'Authorization: Bearer s3cret'] })).toBe('shell.exec:curl -H *');
    // An argv that executes its arguments needs the unqualified base.
    expect(shellExecTool.requiredScope({ argv: ['git', '-c', 'core.pager=sh'], cwd: '/repo', timeoutMs: 5000 })).toBe('shell.exec');
  });

  it('normalizes paths lexically, so `..` cannot smuggle a path past a qualifier', () => {
    expect(fsReadTool.requiredScope({ path: '/home/u/docs/../../../etc/passwd' })).toBe('fs.read:/etc/passwd');
    expect(fsReadTool.requiredScope({ path: '/home//u/./docs/' })).toBe('fs.read:/home/u/docs');
    expect(fsWriteTool.requiredScope({ path: '/tmp/a/../b', content: 'x' })).toBe('fs.write:/tmp/b');
    expect(errorKindOf(() => fsReadTool.requiredScope({ path: '/../etc/passwd' }))).toBe('InvalidScope');
  });

  it.each([
    ['not an object', fsReadTool, 'etc/passwd'],
    ['null', fsReadTool, null],
    ['relative path', fsReadTool, { path: 'notes.txt' }],
    ['empty path', fsReadTool, { path: '' }],
    ['NUL in path', fsReadTool, { path: '/tmp/a\0b' }],
    ['non-string path', fsReadTool, { path: 42 }],
    ['unknown field', fsReadTool, { path: '/tmp/a', pth: '/etc' }],
    ['bad maxBytes', fsReadTool, { path: '/tmp/a', maxBytes: -1 }],
    ['fractional maxBytes', fsReadTool, { path: '/tmp/a', maxBytes: 1.5 }],
    ['missing content', fsWriteTool, { path: '/tmp/a' }],
    ['bad mode', fsWriteTool, { path: '/tmp/a', content: '', mode: 'append' }],
    ['write to /', fsWriteTool, { path: '/', content: '' }],
    ['empty argv', shellExecTool, { argv: [] }],
    ['argv not an array', shellExecTool, { argv: 'rm -rf /' }],
    ['non-string arg', shellExecTool, { argv: ['ls', 1] }],
    ['absolute command', shellExecTool, { argv: ['/bin/sh', '-c', 'id'] }],
    ['relative command', shellExecTool, { argv: ['./evil'] }],
    ['shell expression as command', shellExecTool, { argv: ['ls;id'] }],
    ['command with spaces', shellExecTool, { argv: ['rm -rf /'] }],
    ['option as command', shellExecTool, { argv: ['-rf'] }],
    ['dot command', shellExecTool, { argv: ['..'] }],
    ['NUL in an argument', shellExecTool, { argv: ['echo', 'a\0b'] }],
    ['relative cwd', shellExecTool, { argv: ['ls'], cwd: 'tmp' }],
    ['timeout too long', shellExecTool, { argv: ['ls'], timeoutMs: 3_600_000 }],
  ])('refuses %s with InvalidScope', (_label, tool, input) => {
    expect(errorKindOf(() => tool.requiredScope(input))).toBe('InvalidScope');
  });

  it('says what to do when argv[0] is a path', () => {
    try {
      shellExecTool.requiredScope({ argv: ['/usr/bin/env', 'sh'] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AivyxError);
      expect((e as AivyxError).hint).toMatch(/PATH/);
      expect((e as AivyxError).detail).toEqual({ tool: 'shell.exec' });
    }
  });

  it('finds tools and lists model-facing specs', () => {
    expect(TOOL_CATALOG.map((t) => t.id)).toEqual([
      'fs.read',
      'fs.write',
      'shell.exec',
      'memory.write',
      'memory.recall',
      'memory.forget',
      'fs.delete',
      'fs.metadata',
      'net.fetch',
      'net.post',
      'git.status',
      'git.diff',
      'git.commit',
      'config.read',
      'config.write',
      'audit.read',
      'mcp.call',
      'shell.spawn',
      'channel.send',
      'mission.create',
      'mission.list',
      'mission.cancel',
      'value.read',
      'skills.propose',
      'skills.list',
      'skills.invoke',
      'graph.write',
      'graph.query',
      'agent.delegate',
      'fs.attach',
    ]);
    expect(findTool('fs.read')).toBe(fsReadTool);
    expect(findTool('nope')).toBeUndefined();
    const specs = toolSpecs(['shell.exec']);
    expect(specs).toEqual([{ id: 'shell.exec', description: shellExecTool.description, inputSchema: shellExecTool.inputSchema }]);
    expect(toolSpecs()).toHaveLength(30);
    expect(errorKindOf(() => toolSpecs(['fs.read', 'nope']))).toBe('NotFound');
    expect(shellExecTool.idempotency).toBe('at-most-once');
  });
});
