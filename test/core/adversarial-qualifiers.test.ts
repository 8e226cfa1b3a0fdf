/**
 * Adversarial corpus: each needed scope must be refused against its held scope, either
 * because parsing throws InvalidScope or because the held scope does not grant it.
 */
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { CapabilitySet, Scope } from '../../core/capability/index.js';

type Outcome = 'rejected' | 'denied' | 'granted';

function outcome(needed: string, held: string): Outcome {
  const h = Scope.parse(held); // held scopes in the corpus are legitimate
  let n: Scope;
  try {
    n = Scope.parse(needed);
  } catch (e) {
    expect(e).toBeInstanceOf(AivyxError);
    expect((e as AivyxError).kind).toBe('InvalidScope');
    expect((e as AivyxError).hint).toBeTruthy();
    return 'rejected';
  }
  return n.isGrantedBy(h) ? 'granted' : 'denied';
}

const CORPUS: ReadonlyArray<[label: string, needed: string, held: string]> = [
  // paths
  ['dot-dot escape', 'fs.read:/home/u/../../etc/passwd', 'fs.read:/home/u/**'],
  ['dot-dot above root', 'fs.read:/home/u/../../../../etc/passwd', 'fs.read:/**'],
  ['encoded dot-dot', 'fs.read:/home/u/%2e%2e/%2e%2e/etc/passwd', 'fs.read:/home/u/**'],
  ['encoded dot-dot upper', 'fs.read:/home/u/%2E%2E/x', 'fs.read:/home/u/**'],
  ['bare encoded dot-dot', 'fs.read:%2e%2e', 'fs.read:/**'],
  ['encoded slash', 'fs.read:/home/u%2f..%2f..%2fetc', 'fs.read:/home/u/**'],
  ['backslash traversal', 'fs.read:/home/u/..\\..\\etc\\passwd', 'fs.read:/home/u/**'],
  ['NUL truncation', 'fs.read:/home/u/x.txt\u0000/../../etc/passwd', 'fs.read:/home/u/**'],
  ['tilde', 'fs.read:~/x', 'fs.read:/home/u/**'],
  ['tilde user', 'fs.read:/home/u/~root/x', 'fs.read:/home/u/**'],
  ['relative path', 'fs.read:home/u/x', 'fs.read:/home/u/**'],
  ['sibling prefix', 'fs.read:/home/uevil/x', 'fs.read:/home/u/**'],
  ['plain held is not a prefix', 'fs.read:/home/u/x', 'fs.read:/home/u'],
  ['star does not cross /', 'fs.read:/home/u/a/b', 'fs.read:/home/u/*'],
  ['needed glob broader than held', 'fs.read:/home/**', 'fs.read:/home/u/**'],
  ['newline in path', 'fs.write:/home/u/x\n/etc/passwd', 'fs.write:/home/u/**'],
  // URLs
  ['host suffix', 'net.fetch:https://api.x.com.evil.com/', 'net.fetch:https://api.x.com'],
  ['parent host', 'net.fetch:https://x.com/', 'net.fetch:https://api.x.com'],
  ['userinfo', 'net.fetch:https://user@api.x.com/', 'net.fetch:https://api.x.com'],
  ['userinfo with password', 'net.fetch:https://user:pw@api.x.com/', 'net.fetch:https://api.x.com'],
  ['host as userinfo', 'net.fetch:https://api.x.com@evil.com/', 'net.fetch:https://api.x.com'],
  ['backslash authority', 'net.fetch:https://api.x.com\\@evil.com/', 'net.fetch:https://api.x.com'],
  ['port confusion', 'net.fetch:https://api.x.com:8443/', 'net.fetch:https://api.x.com'],
  ['default port of the other scheme', 'net.fetch:https://api.x.com:80/', 'net.fetch:https://api.x.com'],
  ['scheme downgrade', 'net.fetch:http://api.x.com/', 'net.fetch:https://api.x.com'],
  ['scheme upgrade is still another origin', 'net.fetch:https://api.x.com/', 'net.fetch:http://api.x.com'],
  ['other scheme', 'net.fetch:ftp://api.x.com/', 'net.fetch:https://api.x.com'],
  ['javascript scheme', 'net.fetch:javascript://api.x.com/%0aalert(1)', 'net.fetch:*'],
  ['path segment prefix', 'net.post:https://api.x.com/v10', 'net.post:https://api.x.com/v1'],
  ['URL dot-dot escape', 'net.post:https://api.x.com/v1/../admin', 'net.post:https://api.x.com/v1'],
  ['URL encoded dot-dot', 'net.post:https://api.x.com/v1/%2e%2e/admin', 'net.post:https://api.x.com/v1'],
  ['URL encoded half dot-dot', 'net.post:https://api.x.com/v1/.%2e/admin', 'net.post:https://api.x.com/v1'],
  ['URL encoded slash', 'net.post:https://api.x.com/v1%2f..%2fadmin', 'net.post:https://api.x.com/v1'],
  ['URL doubled slash then dot-dot', 'net.post:https://api.x.com/v1//../admin', 'net.post:https://api.x.com/v1'],
  ['URL above root', 'net.post:https://api.x.com/../../v1', 'net.post:https://api.x.com/v1'],
  ['percent-encoded host', 'net.fetch:https://api.x%2ecom/', 'net.fetch:https://api.x.com'],
  ['IDN host', 'net.fetch:https://аpi.x.com/', 'net.fetch:https://api.x.com'], // Cyrillic а
  ['fullwidth dot host', 'net.fetch:https://api．x.com/', 'net.fetch:https://api.x.com'],
  ['IPv6 literal', 'net.fetch:https://[::ffff:127.0.0.1]/', 'net.fetch:https://127.0.0.1'],
  ['hex IPv4', 'net.fetch:http://0x7f000001/', 'net.fetch:http://127.0.0.1'],
  ['integer IPv4', 'net.fetch:http://2130706433/', 'net.fetch:http://127.0.0.1'],
  ['octal IPv4', 'net.fetch:http://0177.0.0.1/', 'net.fetch:http://127.0.0.1'],
  ['short IPv4', 'net.fetch:http://127.1/', 'net.fetch:http://127.0.0.1'],
  ['query on exact-query held', 'net.fetch:https://api.x.com/a?id=2', 'net.fetch:https://api.x.com/a?id=1'],
  ['URL marker is not granted by a URL', 'net.post:*', 'net.post:https://api.x.com'],
  ['newline in URL', 'net.post:https://api.x.com/v1\nHost: evil.com', 'net.post:https://api.x.com/v1'],
  ['space in URL', 'net.post:https://api.x.com/v1 HTTP/1.1', 'net.post:https://api.x.com/v1'],
  // domains
  ['domain suffix without dot', 'net.dns:evilexample.com', 'net.dns:*.example.com'],
  ['apex not in subdomain glob', 'net.dns:example.com', 'net.dns:*.example.com'],
  ['domain appended', 'net.dns:a.example.com.evil.com', 'net.dns:*.example.com'],
  ['domain IDN', 'net.dns:ехample.com', 'net.dns:*'],
  // commands
  ['semicolon', 'shell.exec:ls;rm', 'shell.exec:ls'],
  ['command substitution', 'shell.exec:$(rm)', 'shell.exec:ls'],
  ['backticks', 'shell.exec:`rm`', 'shell.exec:ls'],
  ['pipe', 'shell.exec:ls|rm', 'shell.exec:ls'],
  ['and-and', 'shell.exec:ls&&rm', 'shell.exec:ls'],
  ['background', 'shell.exec:ls&', 'shell.exec:ls'],
  ['redirect', 'shell.exec:ls>x', 'shell.exec:ls'],
  ['newline', 'shell.exec:ls\nrm', 'shell.exec:ls'],
  ['another subcommand', 'shell.exec:git push', 'shell.exec:git status *'],
  ['arguments past a closed pattern', 'shell.exec:git status --short', 'shell.exec:git status'],
  ['any arguments from a pattern', 'shell.exec:git', 'shell.exec:git status *'],
  ['a "*" spelled out is any arguments', 'shell.exec:git *', 'shell.exec:git status *'],
  ['an argument value in a pattern', 'shell.exec:git log --format=%H', 'shell.exec:git log *'],
  ['a path in a pattern', 'shell.exec:cat /etc/passwd', 'shell.exec:cat *'],
  ['a double space', 'shell.exec:git  status', 'shell.exec:git status *'],
  ['"*" inside a pattern', 'shell.exec:git * push', 'shell.exec:git'],
  ['absolute path', 'shell.exec:/bin/rm', 'shell.exec:rm'],
  ['relative path', 'shell.exec:./ls', 'shell.exec:ls'],
  ['option injection', 'shell.exec:--help', 'shell.exec:ls'],
  ['glob command', 'shell.exec:*', 'shell.exec:ls'],
  ['superset', 'shell.exec:ls,rm', 'shell.exec:ls'],
  ['case variant is another command', 'shell.exec:LS', 'shell.exec:ls'],
  ['spawn with metachar', 'shell.spawn:sh -c "rm"', 'shell.spawn:sh'],
  ['fs.delete root of its own grant', 'fs.delete:/home/u/tmp', 'fs.delete:/home/u/tmp/**'],
  ['fs.delete root of a glob grant', 'fs.delete:/home/u', 'fs.delete:/home/*/**'],
  ['fs.delete of /', 'fs.delete:/', 'fs.delete:/**'],
  ['the data directory from a wide grant', 'kernel.data_dir:/home/u/.aivyx/rest-token', 'fs.read'],
  // simple globs
  ['public prefix then private', 'memory.read:scope:private:x', 'memory.read:scope:public:*'],
  ['public lookalike', 'memory.read:scope:publicity:x', 'memory.read:scope:public:*'],
  ['audit exact', 'audit.read:public:*', 'audit.read:public'],
  ['escape sequence', 'audit.read:public\u001b[2K', 'audit.read:public*'],
  // cross-base and rule 4
  ['other base', 'fs.write:/home/u/x', 'fs.read:/home/u/**'],
  ['bare from qualified', 'fs.read', 'fs.read:/**'],
  ['bare net.post from marker', 'net.post', 'net.post:*'],
  ['reserved base', 'agent.spawn', 'fs.read'],
  ['uppercase base', 'FS.READ:/home/u/x', 'fs.read'],
];

describe('adversarial qualifiers', () => {
  for (const [label, needed, held] of CORPUS) {
    it(`${label}: ${JSON.stringify(needed)} vs ${held}`, () => {
      expect(outcome(needed, held)).not.toBe('granted');
    });
  }

  it('the corpus is not vacuous: the honest variants ARE granted', () => {
    expect(outcome('fs.read:/home/u/x/../y', 'fs.read:/home/u/**')).toBe('granted');
    expect(outcome('net.fetch:https://API.X.COM:443/v1', 'net.fetch:https://api.x.com')).toBe('granted');
    expect(outcome('net.fetch:https://api.x.com./a', 'net.fetch:https://api.x.com')).toBe('granted');
    expect(outcome('net.fetch:https://xn--pi-7mc.x.com/', 'net.fetch:https://xn--pi-7mc.x.com')).toBe('granted');
    expect(outcome('net.dns:A.Example.COM.', 'net.dns:*.example.com')).toBe('granted');
    expect(outcome('shell.exec:ls', 'shell.exec:git,ls')).toBe('granted');
    expect(outcome('shell.exec:git status --short', 'shell.exec:git status *')).toBe('granted');
    expect(outcome('shell.exec:git status *', 'shell.exec:git status *')).toBe('granted');
    expect(outcome('shell.exec:git status', 'shell.exec:git status')).toBe('granted');
    expect(outcome('fs.delete:/home/u/tmp/x', 'fs.delete:/home/u/tmp/**')).toBe('granted');
    expect(outcome('memory.read:scope:public:x', 'memory.read:scope:public:*')).toBe('granted');
  });

  it('an uppercase host is normalized, not a way around a grant', () => {
    expect(Scope.parse('net.fetch:https://API.X.COM/').toString()).toBe('net.fetch:https://api.x.com/');
    expect(CapabilitySet.from(['net.fetch:https://API.x.com']).grants('net.fetch:https://api.X.com/a')).toBe(true);
  });
});
