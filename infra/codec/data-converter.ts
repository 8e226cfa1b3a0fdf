/** The DataConverter every aivyx client and worker uses. */
import { fileURLToPath } from 'node:url';
import type { DataConverter, PayloadCodec } from '@temporalio/common';

/**
 * Path of the module exporting the encoding failure converter. DataConverter accepts a failure
 * converter only by path (the workflow sandbox must bundle it), never as an instance.
 */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.ts', import.meta.url));

/** Payloads through `codec`; failure messages and stacks encoded (so the codec encrypts them too). */
export function aivyxDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}
