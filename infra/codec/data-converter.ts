/** The DataConverter every aivyx client and worker uses. */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { sibling } from '../module-path.js';

/**
 * Path of the module exporting the encoding failure converter. DataConverter accepts a failure
 * converter only by path (the workflow sandbox must bundle it), never as an instance.
 */
export const FAILURE_CONVERTER_PATH = sibling(import.meta.url, './failure-converter');

/** Payloads through `codec`; failure messages and stacks encoded (so the codec encrypts them too). */
export function aivyxDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}
