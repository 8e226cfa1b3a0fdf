/**
 * Command scopes from argv: the plain-word qualifier (what is written into scopes and the audit
 * log), and the programs whose arguments make them execute something, which need the bare base.
 */
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../core/capability/index.js';
import { shellExecTool } from '../../core/tools/shell-exec.js';
import { argvExecutionRisk, argvScopeQualifier, commandScope } from '../../core/tools/shell-argv.js';
import { shellSpawnTool } from '../../core/tools/shell-spawn.js';

const held = (...scopes: string[]) => CapabilitySet.from(scopes);

describe('argv scope qualifier', () => {
  it('names the command and leading plain words, then "*" for whatever follows', () => {
    expect(argvScopeQualifier(['git', 'status'])).toBe('git status');
    expect(argvScopeQualifier(['git', 'status', '--short'])).toBe('git status --short');
    expect(argvScopeQualifier(['git', 'log', '-n', '5'])).toBe('git log -n *');
    expect(argvScopeQualifier(['ls'])).toBe('ls');
    expect(argvScopeQualifier(['ls', '/home/u/.ssh'])).toBe('ls');
    expect(argvScopeQualifier(['npm', 'run', 'build'])).toBe('npm run build');
  });

  it('never writes a path, a value or a token into the scope', () => {
    for (const argv of [
      ['curl', '-H', 'Authorization: Bearer s3cr3t'],
      ['mysql', '--password=hunter2'],
      ['cp', '/home/u/a', '/home/u/b'],
      ['echo', 'SK_LIVE_0123456789abcdef'],
      ['echo', 'x'.repeat(41)],
    ]) {
      const q = argvScopeQualifier(argv);
      for (const arg of argv.slice(1)) if (!/^-/.test(arg) || arg.includes('=')) expect(q, JSON.stringify(argv)).not.toContain(arg);
    }
  });
});

describe('programs that execute their arguments need the unqualified grant', () => {
  const attacks: [string, string[]][] = [
    ['git -c alias', ['git', '-c', 'alias.x=!touch /tmp/pwned', 'x']],
    ['git -c core.pager', ['git', '-c', 'core.pager=sh -c "touch /tmp/pwned"', 'log']],
    ['git --config-env', ['git', '--config-env=core.pager=EVIL', 'log']],
    ['git --exec-path', ['git', '--exec-path=/tmp/evil', 'status']],
    ['git -C elsewhere', ['git', '-C', '/home/u/.aivyx', 'status']],
    ['git --git-dir', ['git', '--git-dir=/elsewhere/.git', 'log']],
    ['git -p (pager)', ['git', '-p', 'log']],
    ['git alias or external command', ['git', 'x']],
    ['git submodule foreach', ['git', 'submodule', 'foreach', 'touch /tmp/pwned']],
    ['git config', ['git', 'config', 'core.pager', 'touch /tmp/pwned']],
    ['git rebase --exec', ['git', 'rebase', '--exec', 'touch /tmp/pwned', 'main']],
    ['git rebase -x', ['git', 'rebase', '-ix', 'touch /tmp/pwned', 'main']],
    ['git grep -O', ['git', 'grep', '-Otouch', 'x']],
    ['git fetch --upload-pack', ['git', 'fetch', '--upload-pack=touch /tmp/pwned', 'origin']],
    ['git ls-remote -u', ['git', 'ls-remote', '-u', 'touch /tmp/pwned', 'origin']],
    ['git diff --ext-diff', ['git', 'diff', '--ext-diff']],
    ['git merge -s', ['git', 'merge', '-s', 'evil', 'x']],
    ['git commit -S', ['git', 'commit', '-S', '-m', 'x']],
    ['find -exec', ['find', '.', '-exec', 'touch', '/tmp/pwned', ';']],
    ['find -execdir', ['find', '.', '-execdir', 'sh', '-c', 'id', ';']],
    ['find -ok', ['find', '.', '-ok', 'rm', '{}', ';']],
    ['find -okdir', ['find', '.', '-okdir', 'rm', '{}', ';']],
    ['find -delete', ['find', '/home/u/.aivyx', '-delete']],
    ['find -fprint', ['find', '.', '-fprint', '/home/u/.bashrc']],
    ['env', ['env', 'sh', '-c', 'touch /tmp/pwned']],
    ['xargs', ['xargs', 'touch']],
    ['nice', ['nice', 'sh', '-c', 'id']],
    ['timeout', ['timeout', '5', 'sh']],
    ['sudo', ['sudo', 'id']],
    ['sh', ['sh', '-c', 'id']],
    ['bash', ['bash', '-c', 'id']],
    ['zsh', ['zsh', '-c', 'id']],
    ['dash', ['dash', '-c', 'id']],
    ['python3', ['python3', '-c', 'import os; os.system("id")']],
    ['python3.12', ['python3.12', '-c', 'print(1)']],
    ['perl', ['perl', '-e', 'system("id")']],
    ['ruby', ['ruby', '-e', 'system("id")']],
    ['node', ['node', '-e', 'require("child_process").execSync("id")']],
    ['awk system()', ['awk', 'BEGIN{system("touch /tmp/pwned")}']],
    ['gawk', ['gawk', 'BEGIN{system("id")}']],
    ['sed e', ['sed', '-e', '1e touch /tmp/pwned', '/etc/hostname']],
    ['sed w', ['sed', '-n', 'w /home/u/.bashrc', '/etc/hostname']],
    ['tar --to-command', ['tar', '-xf', 'a.tar', '--to-command=sh']],
    ['tar -I', ['tar', '-I', 'sh -c id', '-xf', 'a.tar']],
    ['tar old style I', ['tar', 'xIf', 'sh', 'a.tar']],
    ['tar --checkpoint-action', ['tar', '--checkpoint=1', '--checkpoint-action=exec=id', '-cf', '/dev/null', '.']],
    ['rsync -e', ['rsync', '-e', 'sh -c id', 'a', 'b:c']],
    ['scp -o ProxyCommand', ['scp', '-o', 'ProxyCommand=id', 'a', 'b:c']],
    ['ssh', ['ssh', 'host', 'id']],
    ['vim -c', ['vim', '-c', '!id']],
    ['less', ['less', '/etc/hostname']],
    ['watch', ['watch', 'id']],
    ['zip -TT', ['zip', '-T', '-TT', 'sh -c id', 'a.zip', 'f']],
    ['wget -e', ['wget', '-e', 'use_askpass=/bin/sh', 'http://x']],
  ];

  for (const [label, argv] of attacks) {
    it(`${label}: bare scope, denied under every qualified grant, with a reason`, () => {
      expect(argvExecutionRisk(argv), label).toMatch(/run|execute|write|delete|point git|sandbox|alias|program/i);
      expect(commandScope('shell.exec', argv)).toBe('shell.exec');
      expect(shellExecTool.requiredScope({ argv })).toBe('shell.exec');
      expect(shellSpawnTool.requiredScope({ argv })).toBe('shell.spawn');
      const command = argv[0] as string;
      expect(held(`shell.exec:${command}`, `shell.exec:${command} *`).grants(shellExecTool.requiredScope({ argv }))).toBe(false);
      expect(held('shell.exec').grants(shellExecTool.requiredScope({ argv }))).toBe(true);
    });
  }

  it('harmless uses of the same programs stay reachable by a qualified grant', () => {
    const ok: string[][] = [
      ['git', 'status', '--short'],
      ['git', '--no-pager', 'log', '--oneline'],
      ['git', 'diff', '--stat'],
      ['git', 'add', '-u'],
      ['git', 'log', '-S', 'needle'],
      ['git', 'grep', '-n', 'needle'],
      ['find', '.', '-name', '*.ts', '-type', 'f'],
      ['sed', '--sandbox', '-e', 's/a/b/', 'f'],
      ['tar', '-czf', 'out.tar.gz', 'dir'],
      ['ls', '-la'],
      ['rsync', '-av', 'a/', 'b/'],
    ];
    for (const argv of ok) expect(argvExecutionRisk(argv), JSON.stringify(argv)).toBeUndefined();
  });

  it('shell.exec:git status * allows git status --short but not git push', () => {
    const grant = held('shell.exec:git status *');
    expect(grant.grants(shellExecTool.requiredScope({ argv: ['git', 'status', '--short'] }))).toBe(true);
    expect(grant.grants(shellExecTool.requiredScope({ argv: ['git', 'status'] }))).toBe(true);
    expect(grant.grants(shellExecTool.requiredScope({ argv: ['git', 'push'] }))).toBe(false);
    expect(grant.grants(shellExecTool.requiredScope({ argv: ['git', 'push', 'origin', 'main'] }))).toBe(false);
    expect(grant.grants(shellExecTool.requiredScope({ argv: ['git', '-c', 'x=y', 'status'] }))).toBe(false);
  });
});
