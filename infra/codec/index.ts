/** Encrypted Temporal payloads: the codec, the data converter that applies it, and the codec server. */
export {
  BINDING_METADATA,
  createPayloadCodec,
  DEFAULT_PAYLOAD_KEY_ID,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  type PayloadCodecOptions,
  type UnencryptedPolicy,
} from './payload-codec.js';
export { aivyxDataConverter, FAILURE_CONVERTER_PATH } from './data-converter.js';
export { startCodecServer, CODEC_BODY_LIMIT, type CodecServer, type CodecServerOptions } from './codec-server.js';
