/**
 * A span per model step, in the OpenTelemetry GenAI semantic conventions: `chat <model>` with the
 * provider, the model, the token usage when the provider reports it, and how the step ended. The
 * prompt, the history, the answer and the tool arguments are never recorded.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import type { LlmStepResult } from '../../core/llm.js';
import { count, errorKind, field } from './span-facts.js';

/** The tracer our own spans come from. */
export const AIVYX_TRACER = 'aivyx';

/** The attributes of a finished step: finish reason, tool calls and (when reported) token usage. */
export function llmResultAttributes(result: LlmStepResult): Attributes {
  const attrs: Attributes = {
    'gen_ai.response.finish_reasons': [result.type === 'tool_calls' ? 'tool_calls' : 'stop'],
    'aivyx.llm.tool_calls': result.type === 'tool_calls' ? result.calls.length : 0,
  };
  // Read defensively: `usage` is optional, and older providers do not report it at all.
  const usage = field(result, 'usage');
  const input = count(field(usage, 'inputTokens'));
  const output = count(field(usage, 'outputTokens'));
  if (input !== undefined) attrs['gen_ai.usage.input_tokens'] = input;
  if (output !== undefined) attrs['gen_ai.usage.output_tokens'] = output;
  return attrs;
}

/**
 * `provider` with each step in a GenAI `chat` span (a child of the activity's span). Without a
 * registered tracer provider (tracing off) the spans are the API's no-ops.
 */
export function tracedLlmProvider(provider: LlmProvider): LlmProvider {
  const model = provider.model ?? provider.name;
  return {
    ...provider,
    step: (req, sink) =>
      trace.getTracer(AIVYX_TRACER).startActiveSpan(
        `chat ${model}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': provider.name,
            // The older name of the provider attribute, still what many backends group by.
            'gen_ai.system': provider.name,
            'gen_ai.request.model': model,
            'aivyx.llm.step': req.step,
            'aivyx.llm.tools_offered': req.tools.length,
          },
        },
        async (span) => {
          try {
            const result = await provider.step(req, sink);
            span.setAttributes(llmResultAttributes(result));
            return result;
          } catch (err) {
            span.setAttribute('error.type', errorKind(field(err, 'kind')));
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        },
      ),
  };
}
