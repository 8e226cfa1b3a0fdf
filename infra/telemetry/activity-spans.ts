/**
 * Our spans inside the Temporal interceptors' `RunActivity` spans: a GenAI `execute_tool <tool>`
 * span per tool call (its name and outcome, never its arguments or output), a `deliver <channel>`
 * span per delivered reply, and the turn's outcome on `RunActivity:finalizeTurn` (the turn's
 * summary: channel, tier, status, tool calls). Every value passes the checks of span-facts.ts.
 */
import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';
import { AIVYX_TRACER } from './llm-spans.js';
import { channelName, count, errorKind, field, oneOf, toolName, trustTier } from './span-facts.js';

const TOOL_STATUSES = ['Completed', 'Denied', 'RequiresEscalation', 'Failed'];
const TURN_STATUSES = ['Completed', 'Escalated', 'TimedOut', 'Cancelled', 'Failed'];

/** The tool call's span attributes before it runs (`runTool`'s input). */
function toolCallAttributes(input: unknown): Attributes {
  const step = count(field(input, 'step'));
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': toolName(field(field(input, 'call'), 'tool')),
    ...(step === undefined ? {} : { 'aivyx.llm.step': step }),
  };
}

/** Its outcome (`runTool`'s result): status, and the error's kind when it failed. */
function toolOutcomeAttributes(result: unknown): Attributes {
  const outcome = field(result, 'outcome');
  const status = oneOf(field(outcome, 'status'), TOOL_STATUSES);
  const facts = field(result, 'facts');
  const tainted = field(facts, 'taintedBy');
  return {
    'aivyx.tool.outcome': status,
    ...(status === 'Failed' ? { 'error.type': errorKind(field(field(outcome, 'error'), 'kind')) } : {}),
    // Whether the call was made after untrusted content, whether its output is untrusted (core/taint.ts),
    // and whether that output was held as a value the model never saw (core/values.ts): yes/no, never the sources.
    'aivyx.tool.tainted': Array.isArray(tainted) && tainted.length > 0,
    'aivyx.tool.untrusted_output': field(facts, 'untrustedOutput') !== undefined || field(facts, 'heldAs') !== undefined,
    'aivyx.tool.held': field(facts, 'heldAs') !== undefined,
  };
}

/** A turn's outcome and where it came from (`deliverReply`'s and `finalizeTurn`'s inputs carry both). */
function turnAttributes(channel: unknown, outcome: unknown): Attributes {
  const status = oneOf(field(outcome, 'status'), TURN_STATUSES);
  const calls = count(field(outcome, 'toolCallsMade'));
  return {
    'aivyx.channel.name': channelName(field(channel, 'name')),
    'aivyx.channel.trust_tier': trustTier(field(channel, 'trustTier')),
    'aivyx.turn.outcome': status,
    ...(status === 'Failed' ? { 'error.type': errorKind(field(field(outcome, 'error'), 'kind')) } : {}),
    ...(calls === undefined ? {} : { 'aivyx.turn.tool_calls': calls }),
  };
}

/** Runs `fn` in a child span `name`; `after` adds attributes from its result. */
async function inSpan(name: string, attrs: Attributes, fn: () => Promise<unknown>, after?: (r: unknown) => Attributes): Promise<unknown> {
  return trace.getTracer(AIVYX_TRACER).startActiveSpan(name, { attributes: attrs }, async (span: Span) => {
    try {
      const result = await fn();
      if (after) span.setAttributes(after(result));
      return result;
    } catch (err) {
      span.setAttribute('error.type', errorKind(field(err, 'type') ?? field(err, 'kind')));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Activity interceptors adding our spans; listed after the Temporal OpenTelemetry ones (inside their span). */
export function aivyxActivitySpans(ctx: Context): ActivityInterceptors {
  return {
    inbound: {
      async execute(input, next) {
        const arg = input.args[0];
        switch (ctx.info.activityType) {
          case 'runTool': {
            const attrs = toolCallAttributes(arg);
            return inSpan(`execute_tool ${String(attrs['gen_ai.tool.name'])}`, attrs, () => next(input), toolOutcomeAttributes);
          }
          case 'deliverReply': {
            const attrs = turnAttributes(field(arg, 'channel'), field(arg, 'outcome'));
            return inSpan(`deliver ${String(attrs['aivyx.channel.name'])}`, attrs, () => next(input));
          }
          case 'finalizeTurn':
            trace.getActiveSpan()?.setAttributes(turnAttributes(field(field(arg, 'request'), 'channel'), field(arg, 'outcome')));
            return next(input);
          default:
            return next(input);
        }
      },
    },
  };
}
