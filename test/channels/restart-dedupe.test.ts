/** The CLI's answer to a restarted LLM step: text already on the terminal is not printed twice. */
import { describe, expect, it } from 'vitest';
import { createRestartDedupe } from '../../channels/cli/restart-dedupe.js';

describe('restart dedupe', () => {
  it('passes text through when nothing restarted', () => {
    const d = createRestartDedupe();
    expect(d.text('Hello ')).toEqual({ show: 'Hello ', diverged: false });
    expect(d.text('world')).toEqual({ show: 'world', diverged: false });
  });

  it('swallows the repeated prefix after a restart, in chunks of any size, and shows what is new', () => {
    const d = createRestartDedupe();
    d.text('The answer ');
    d.text('is');
    d.restarted();
    expect(d.text('The ans')).toEqual({ show: '', diverged: false });
    expect(d.text('wer is 42')).toEqual({ show: ' 42', diverged: false });
    expect(d.text('.')).toEqual({ show: '.', diverged: false });
  });

  it('says once when the retried step goes a different way, and shows that attempt whole', () => {
    const d = createRestartDedupe();
    d.text('Deleting the file');
    d.restarted();
    expect(d.text('Delet')).toEqual({ show: '', diverged: false });
    expect(d.text('ion is not needed')).toEqual({ show: 'Deletion is not needed', diverged: true });
    expect(d.text(' after all')).toEqual({ show: ' after all', diverged: false });
  });

  it('a second restart expects the text of the attempt that restarted', () => {
    const d = createRestartDedupe();
    d.text('abc');
    d.restarted();
    d.text('abcdef');
    d.restarted();
    expect(d.text('abcdefg')).toEqual({ show: 'g', diverged: false });
  });

  it('a new step expects nothing', () => {
    const d = createRestartDedupe();
    d.text('step one');
    d.nextStep();
    d.restarted();
    expect(d.text('step two')).toEqual({ show: 'step two', diverged: false });
  });
});
