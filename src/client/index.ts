/** The streaming HTTP client: request bodies, the pure stream timer, derived metrics, errors, undici transport. */
export { createClient, type Client, type ClientOptions, type SendContext } from './client';
export { buildRequestBody, buildHeaders, endpointPath, makeRequestIdPrefix, type HeaderInputs } from './body';
export { StreamTimer, createStreamTimer, MAX_EVENT_CHARS, type RecordMeta } from './timing';
export { deriveMetrics, type DerivedMetrics, type TimingFields } from './metrics';
export {
  classifyNetworkError,
  describeHttpError,
  describeStreamError,
  errorCodeOf,
  errorInfoOf,
  httpErrorCode,
  redact,
  MAX_MESSAGE_CHARS,
} from './errors';
export { CHUNK_STAMPS, TURN_HOLD_MAX_MS, chunkClock, checkChunkStamp, type ArrivalClock, type ChunkStamp } from './chunk-stamp';
export { warmClient, WARM_ROUNDS, WARM_STREAMS, WARM_TOKENS, type WarmUp } from './warm-up';
export { streamRequest, DRAIN_GRACE_MS, MAX_ERROR_BODY_BYTES, type StreamRequestInput } from './request';
