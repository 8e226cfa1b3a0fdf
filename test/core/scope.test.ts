import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { CapabilitySet, KNOWN_SCOPE_BASES, RESERVED_SCOPE_BASES, Scope, qualifierKindOf } from '../../core/capability/index.js';
import { normalizePosixPath, tryNormalizePosixPath } from '../../core/path.js';

function parseError(s: string): AivyxError {
  try {
    Scope.parse(s);
  } catch (e) {
    expect(e).toBeInstanceOf(AivyxError);
    expect((e as AivyxError).kind).toBe('InvalidScope');
    return e as AivyxError;
  }
  throw new Error(`expected ${JSON.stringify(s)} to be rejected`);
}

const granted = (needed: string, held: string): boolean => Scope.parse(needed).isGrantedBy(Scope.parse(held));

describe('scope bases', () => {
  it('knows exactly the 34 bases (kernel.data_dir, mission.list, mission.cancel, skills.*, graph.*, agent.delegate and agent.terminate included) and the 15 reserved ones', () => {
    expect(KNOWN_SCOPE_BASES).toHaveLength(34);
    expect(KNOWN_SCOPE_BASES).toContain('agent.delegate');
    expect(KNOWN_SCOPE_BASES).toContain('agent.terminate');
    expect(KNOWN_SCOPE_BASES).toContain('kernel.data_dir');
    expect(RESERVED_SCOPE_BASES).toHaveLength(15);
    expect(KNOWN_SCOPE_BASES).toContain('git.write');
    expect(KNOWN_SCOPE_BASES).toContain('mission.gate');
    expect(KNOWN_SCOPE_BASES).toContain('mission.list');
    expect(KNOWN_SCOPE_BASES).toContain('mission.cancel');
    for (const b of RESERVED_SCOPE_BASES) expect(KNOWN_SCOPE_BASES).not.toContain(b);
  });

  it('parses every known base bare', () => {
    for (const b of KNOWN_SCOPE_BASES) {
      const s = Scope.parse(b);
      expect(s.base).toBe(b);
      expect(s.qualifier).toBeUndefined();
      expect(s.toString()).toBe(b);
    }
  });

  it('rejects reserved bases saying so', () => {
    for (const b of RESERVED_SCOPE_BASES) expect(parseError(b).message).toContain('reserved, not available in v1');
    expect(parseError('agent.spawn:x').message).toContain('reserved');
  });

  it('suggests the nearest known base for a typo', () => {
    expect(parseError('fs.raed').message).toBe('unknown scope base "fs.raed" (did you mean fs.read?)');
    expect(parseError('shell.exce:ls').message).toContain('did you mean shell.exec?');
    expect(parseError('totally.unrelated').message).not.toContain('did you mean');
  });

  it('rejects malformed bases with a hint', () => {
    expect(parseError('FS.read').hint).toContain('fs.read');
    expect(parseError(' fs.read').hint).toContain('whitespace');
    for (const s of ['', 'fs', 'fs.', '.read', 'fs..read', '1fs.read', 'fs.read ', 'fs-read', ':x']) parseError(s);
  });

  it('rejects an empty qualifier', () => {
    expect(parseError('fs.read:').message).toContain('empty qualifier');
  });

  it('tryParse returns undefined instead of throwing', () => {
    expect(Scope.tryParse('fs.raed')).toBeUndefined();
    expect(Scope.tryParse('fs.read:/x')?.toString()).toBe('fs.read:/x');
  });

  it('splits at the FIRST colon so qualifiers may contain colons', () => {
    const s = Scope.parse('memory.read:scope:public:*');
    expect(s.base).toBe('memory.read');
    expect(s.qualifier).toBe('scope:public:*');
    expect(Scope.parse('net.fetch:https://a.example.com:8443/x').qualifier).toBe('https://a.example.com:8443/x');
  });

  it('fixes the qualifier kind by base', () => {
    expect(qualifierKindOf('fs.read')).toBe('path');
    expect(qualifierKindOf('git.write')).toBe('path');
    expect(qualifierKindOf('net.fetch')).toBe('url');
    expect(qualifierKindOf('net.post')).toBe('url');
    expect(qualifierKindOf('net.dns')).toBe('domain');
    expect(qualifierKindOf('shell.spawn')).toBe('allowlist');
    for (const b of ['llm.call', 'memory.forget', 'channel.send', 'audit.read', 'config.write', 'mission.create'])
      expect(qualifierKindOf(b)).toBe('glob');
    expect(() => qualifierKindOf('agent.spawn')).toThrow(AivyxError);
    // A URL-looking fs qualifier is a malformed path, not a URL prefix.
    parseError('fs.read:https://x.com/');
    // A path-looking net qualifier is a malformed URL.
    parseError('net.fetch:/etc/passwd');
  });
});

describe('attenuation rules', () => {
  it('rule 1: bases must match exactly', () => {
    expect(granted('fs.read:/foo', 'fs.write:/foo')).toBe(false);
    expect(granted('fs.read:/foo', 'fs.write')).toBe(false);
    expect(granted('fs.read', 'fs.read')).toBe(true);
  });

  it('rule 2: unqualified held grants any qualified needed', () => {
    expect(granted('fs.read:/etc/passwd', 'fs.read')).toBe(true);
    expect(granted('net.post:https://x.com/a', 'net.post')).toBe(true);
    expect(granted('shell.exec:ls', 'shell.exec')).toBe(true);
    expect(granted('memory.read:session:1', 'memory.read')).toBe(true);
  });

  it('rule 3: qualified held grants qualified needed only when the qualifier matches', () => {
    expect(granted('fs.read:/home/u/a.txt', 'fs.read:/home/u/**')).toBe(true);
    expect(granted('fs.read:/etc/a.txt', 'fs.read:/home/u/**')).toBe(false);
  });

  it('rule 4: qualified held never grants unqualified needed', () => {
    for (const held of ['fs.read:/**', 'net.post:*', 'memory.forget:*', 'shell.exec:ls', 'net.dns:*']) {
      expect(granted(held.split(':')[0] as string, held)).toBe(false);
    }
  });
});

describe('path qualifiers', () => {
  it('canonicalizes lexically', () => {
    expect(Scope.parse('fs.read:/a//b/./c/').toString()).toBe('fs.read:/a/b/c');
    expect(Scope.parse('fs.read:/a/b/../c').toString()).toBe('fs.read:/a/c');
    expect(Scope.parse('fs.read:/a/**/**/b').toString()).toBe('fs.read:/a/**/b');
    expect(Scope.parse('fs.read:/').toString()).toBe('fs.read:/');
  });

  it('rejects relative, escaping, encoded, tilde, backslash, NUL', () => {
    for (const q of [
      'a/b',
      './a',
      '/../etc',
      '/a/../../b',
      '/a/%2e%2e/b',
      '/a%2Fb',
      '~/x',
      '/home/~u',
      '/a\\b',
      '/a\0b',
      '/a/x**',
      '/a/*/../b',
    ])
      parseError(`fs.read:${q}`);
  });

  it('plain held path grants exactly itself', () => {
    expect(granted('fs.read:/a/b', 'fs.read:/a/b')).toBe(true);
    expect(granted('fs.read:/a/b/c', 'fs.read:/a/b')).toBe(false);
    expect(granted('fs.read:/a/bc', 'fs.read:/a/b')).toBe(false);
  });

  it('* matches one segment, ? one char, ** any depth including none', () => {
    expect(granted('fs.read:/a/x.txt', 'fs.read:/a/*')).toBe(true);
    expect(granted('fs.read:/a/b/x.txt', 'fs.read:/a/*')).toBe(false);
    expect(granted('fs.read:/a/x.txt', 'fs.read:/a/*.txt')).toBe(true);
    expect(granted('fs.read:/a/x.md', 'fs.read:/a/*.txt')).toBe(false);
    expect(granted('fs.read:/a/x1', 'fs.read:/a/x?')).toBe(true);
    expect(granted('fs.read:/a/x12', 'fs.read:/a/x?')).toBe(false);
    expect(granted('fs.read:/a', 'fs.read:/a/**')).toBe(true);
    expect(granted('fs.read:/a/b/c/d', 'fs.read:/a/**')).toBe(true);
    expect(granted('fs.read:/ab', 'fs.read:/a/**')).toBe(false);
    expect(granted('fs.read:/a/b/c/x.txt', 'fs.read:/a/**/x.txt')).toBe(true);
    expect(granted('fs.read:/a/x.txt', 'fs.read:/a/**/x.txt')).toBe(true);
    expect(granted('fs.read:/a/b/y.txt', 'fs.read:/a/**/x.txt')).toBe(false);
    expect(granted('fs.read:/', 'fs.read:/**')).toBe(true);
  });

  it('needed globs are granted only by identical or literal-prefix/** held', () => {
    expect(granted('fs.read:/a/b/*', 'fs.read:/a/**')).toBe(true);
    expect(granted('fs.read:/a/**', 'fs.read:/a/**')).toBe(true);
    expect(granted('fs.read:/a/**', 'fs.read:/**')).toBe(true);
    expect(granted('fs.read:/a/**', 'fs.read:/a/*')).toBe(false);
    expect(granted('fs.read:/a*/**', 'fs.read:/a/**')).toBe(false);
    expect(granted('fs.read:/a/*', 'fs.read:/*/*')).toBe(false); // sound but incomplete, documented
  });
});

describe('URL qualifiers', () => {
  it('canonicalizes scheme, host, default port, dot segments, fragment', () => {
    expect(Scope.parse('net.fetch:HTTPS://API.Example.com.:443/v1/./a/../b#frag').qualifier).toBe('https://api.example.com/v1/b');
    expect(Scope.parse('net.fetch:http://x.com:80').qualifier).toBe('http://x.com/');
    expect(Scope.parse('net.fetch:https://x.com:8443/').qualifier).toBe('https://x.com:8443/');
    expect(Scope.parse('net.fetch:https://x.com/%7euser/%aa').qualifier).toBe('https://x.com/~user/%AA');
    expect(Scope.parse('net.fetch:*').qualifier).toBe('*');
  });

  it('prefix matches on segment boundaries with the exact host and port', () => {
    expect(granted('net.fetch:https://api.x.com/v1', 'net.fetch:https://api.x.com/v1')).toBe(true);
    expect(granted('net.fetch:https://api.x.com/v1/x', 'net.fetch:https://api.x.com/v1')).toBe(true);
    expect(granted('net.fetch:https://api.x.com/v10', 'net.fetch:https://api.x.com/v1')).toBe(false);
    expect(granted('net.fetch:https://api.x.com/v1/x', 'net.fetch:https://api.x.com/v1/')).toBe(true);
    expect(granted('net.fetch:https://api.x.com/v1', 'net.fetch:https://api.x.com/v1/')).toBe(false);
    expect(granted('net.fetch:https://api.x.com/anything', 'net.fetch:https://api.x.com')).toBe(true);
    expect(granted('net.fetch:https://sub.api.x.com/', 'net.fetch:https://api.x.com')).toBe(false);
    expect(granted('net.fetch:https://api.x.com:443/a', 'net.fetch:https://api.x.com')).toBe(true);
  });

  it('queries: held without a query grants any; with one, only that exact URL', () => {
    expect(granted('net.fetch:https://x.com/a?q=1', 'net.fetch:https://x.com/a')).toBe(true);
    expect(granted('net.fetch:https://x.com/a?q=1', 'net.fetch:https://x.com/a?q=1')).toBe(true);
    expect(granted('net.fetch:https://x.com/a?q=2', 'net.fetch:https://x.com/a?q=1')).toBe(false);
    expect(granted('net.fetch:https://x.com/a/b?q=1', 'net.fetch:https://x.com/a?q=1')).toBe(false);
    expect(granted('net.fetch:https://x.com/a', 'net.fetch:https://x.com/a?q=1')).toBe(false);
  });

  it('* grants any qualified URL, and only * grants *', () => {
    expect(granted('net.post:https://x.com/a', 'net.post:*')).toBe(true);
    expect(granted('net.post:*', 'net.post:https://x.com/')).toBe(false);
    expect(granted('net.post:*', 'net.post')).toBe(true);
  });

  it('rejects non-http schemes, bad ports, doubled slashes, escapes of / and .', () => {
    for (const q of [
      'ftp://x.com/',
      'file:///etc/passwd',
      'x.com/a',
      '//x.com/a',
      'https://x.com:0/',
      'https://x.com:65536/',
      'https://x.com:/',
      'https://x.com:a/',
      'https://x.com//a',
      'https://x.com/a/%2e%2e/b',
      'https://x.com/a%2fb',
      'https://x.com/a%5cb',
      'https://x.com/%zz',
      'https://x.com/a b',
      'https://x.com/../a',
      'https://[::1]/',
      'https:///a',
      'https://x_y.com/',
    ]) {
      parseError(`net.fetch:${q}`);
    }
  });
});

describe('domain qualifiers', () => {
  it('canonicalizes and matches at label boundaries', () => {
    expect(Scope.parse('net.dns:*.Example.COM.').qualifier).toBe('*.example.com');
    expect(granted('net.dns:a.example.com', 'net.dns:*.example.com')).toBe(true);
    expect(granted('net.dns:a.b.example.com', 'net.dns:*.example.com')).toBe(true);
    expect(granted('net.dns:*.b.example.com', 'net.dns:*.example.com')).toBe(true);
    expect(granted('net.dns:example.com', 'net.dns:*.example.com')).toBe(false);
    expect(granted('net.dns:evilexample.com', 'net.dns:*.example.com')).toBe(false);
    expect(granted('net.dns:a.example.com', 'net.dns:example.com')).toBe(false);
    expect(granted('net.dns:*.example.com', 'net.dns:a.example.com')).toBe(false);
    expect(granted('net.dns:anything.org', 'net.dns:*')).toBe(true);
    expect(granted('net.dns:*', 'net.dns:*.org')).toBe(false);
  });

  it('rejects inner wildcards, IPs, bad labels', () => {
    for (const q of ['a.*.com', '*example.com', '**.x.com', '127.0.0.1', 'a..com', '-a.com', 'a_b.com', 'bücher.de'])
      parseError(`net.dns:${q}`);
  });
});

describe('command allowlists', () => {
  it('canonicalizes to a sorted, deduplicated list', () => {
    expect(Scope.parse('shell.exec:ls,git,ls').qualifier).toBe('git,ls');
  });

  it('needed set must be a subset of the held set', () => {
    expect(granted('shell.exec:ls', 'shell.exec:git,ls')).toBe(true);
    expect(granted('shell.exec:git,ls', 'shell.exec:ls,git')).toBe(true);
    expect(granted('shell.exec:ls,rm', 'shell.exec:git,ls')).toBe(false);
    expect(granted('shell.exec:l', 'shell.exec:ls')).toBe(false);
  });

  it('rejects empty entries, paths and leading dashes', () => {
    for (const q of [
      'ls,,git',
      ',ls',
      'ls,',
      '/bin/rm',
      './rm',
      '-rf',
      '.hidden',
      ' ls',
      'l  s',
      'ls ',
      'ls * -la',
      'ls /tmp',
      'git log --format=x',
      'git Status',
      'ls\t-la',
    ])
      parseError(`shell.exec:${q}`);
    expect(parseError('shell.exec:/bin/rm').message).toContain('is a path');
    expect(parseError('shell.exec:cat /etc/passwd').message).toContain('is not a plain word');
  });

  it('argv patterns: a command, plain words, and an optional final * (any further arguments)', () => {
    expect(Scope.parse('shell.exec:git status *').qualifier).toBe('git status *');
    expect(Scope.parse('shell.exec:git *').qualifier).toBe('git');
    expect(Scope.parse('shell.exec:git status *,ls,git status *').qualifier).toBe('git status *,ls');
    expect(granted('shell.exec:git status --short', 'shell.exec:git status *')).toBe(true);
    expect(granted('shell.exec:git status', 'shell.exec:git status *')).toBe(true);
    expect(granted('shell.exec:git status --short *', 'shell.exec:git status *')).toBe(true);
    expect(granted('shell.exec:git push', 'shell.exec:git status *')).toBe(false);
    expect(granted('shell.exec:git', 'shell.exec:git status *')).toBe(false);
    expect(granted('shell.exec:git status', 'shell.exec:git status')).toBe(true);
    expect(granted('shell.exec:git status *', 'shell.exec:git status')).toBe(false);
    expect(granted('shell.exec:git status --short', 'shell.exec:git status')).toBe(false);
    expect(granted('shell.exec:git status --short', 'shell.exec:git')).toBe(true);
    expect(granted('shell.spawn:npm test', 'shell.spawn:npm test,npm run *')).toBe(true);
  });
});

describe('simple glob qualifiers', () => {
  it('* matches any characters including colons, ? one character', () => {
    expect(granted('memory.read:scope:public:notes', 'memory.read:scope:public:*')).toBe(true);
    expect(granted('memory.read:scope:public:a:b', 'memory.read:scope:public:*')).toBe(true);
    expect(granted('memory.read:scope:private:notes', 'memory.read:scope:public:*')).toBe(false);
    expect(granted('llm.call:gpt-4', 'llm.call:gpt-?')).toBe(true);
    expect(granted('llm.call:gpt-40', 'llm.call:gpt-?')).toBe(false);
    expect(granted('audit.read:public', 'audit.read:public')).toBe(true);
    expect(granted('audit.read:publicity', 'audit.read:public')).toBe(false);
    expect(granted('config.read:a.b', 'config.read:a?b')).toBe(true);
    expect(granted('config.read:axb', 'config.read:a.b')).toBe(false); // '.' is literal
  });

  it('needed globs are granted only by identical or literal-prefix* held', () => {
    expect(granted('memory.read:session:*', 'memory.read:*')).toBe(true);
    expect(granted('memory.read:session:*', 'memory.read:session:*')).toBe(true);
    expect(granted('memory.read:*', 'memory.read:session:*')).toBe(false);
    expect(granted('memory.read:s*', 'memory.read:session:*')).toBe(false);
  });

  it('rejects control characters', () => {
    for (const q of ['a\nb', 'a\u0000', 'a\u001b[31m', 'x\u007f']) parseError(`memory.read:${q}`);
  });
});

describe('normalizePosixPath', () => {
  it('normalizes absolute paths lexically', () => {
    expect(normalizePosixPath('/a//b/./c/../d/')).toBe('/a/b/d');
    expect(normalizePosixPath('/')).toBe('/');
    expect(normalizePosixPath('//')).toBe('/');
    expect(normalizePosixPath('/a/..')).toBe('/');
  });

  it('refuses relative paths, NUL, and climbing above /', () => {
    for (const p of ['a', '', './a', '/..', '/a/../..', '/a\0']) {
      expect(tryNormalizePosixPath(p)).toBeUndefined();
      expect(() => normalizePosixPath(p)).toThrow(AivyxError);
    }
  });
});

describe('fs.delete: `**` never matches its own root', () => {
  it('fs.delete:/x/** grants what lies under /x, never /x itself; other bases keep ** matching the root', () => {
    expect(granted('fs.delete:/x/a', 'fs.delete:/x/**')).toBe(true);
    expect(granted('fs.delete:/x/a/b', 'fs.delete:/x/**')).toBe(true);
    expect(granted('fs.delete:/x', 'fs.delete:/x/**')).toBe(false);
    expect(granted('fs.delete:/', 'fs.delete:/**')).toBe(false);
    expect(granted('fs.delete:/x/y', 'fs.delete:/x/*/**')).toBe(false);
    expect(granted('fs.delete:/x/y/z', 'fs.delete:/x/*/**')).toBe(true);
    expect(granted('fs.delete:/x', 'fs.delete:/x')).toBe(true);
    expect(granted('fs.delete:/x', 'fs.delete')).toBe(true);
    expect(granted('fs.read:/x', 'fs.read:/x/**')).toBe(true);
    expect(granted('fs.write:/x', 'fs.write:/x/**')).toBe(true);
    // Intersections keep the strict meaning.
    expect(
      CapabilitySet.from(['fs.delete'])
        .intersect(CapabilitySet.from(['fs.delete:/x/**']))
        .grants('fs.delete:/x'),
    ).toBe(false);
  });
});
